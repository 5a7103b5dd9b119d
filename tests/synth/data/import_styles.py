"""The import styles people use for linear algebra, run unchanged under ``flamefuse fuse``."""
import sys

import numpy as np
import numpy.linalg as la
from numpy.linalg import cholesky, inv, slogdet
from scipy.linalg import cho_factor, cho_solve

n = int(sys.argv[1])
rng = np.random.default_rng(0)
x = rng.standard_normal((n, n))
A = x @ x.T + n * np.eye(n)
b = rng.standard_normal(n)
L = cholesky(A)
Li = inv(L)
C = Li.T @ Li
y = la.solve(A, b)
z = cho_solve(cho_factor(A), b)
sign, logdet = slogdet(A)
det = la.det(A / n)
want = 2 * np.sum(np.log(np.diagonal(L)))
print(f"{float(np.abs(A @ C - np.eye(n)).max() + np.abs(A @ y - b).max() + np.abs(A @ z - b).max() + abs(sign - 1) + abs(logdet - want) / abs(want) + abs(det / np.exp(want - n * np.log(n)) - 1)):.2e}")
