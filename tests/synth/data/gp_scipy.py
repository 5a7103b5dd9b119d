"""A Gaussian-process mean written with SciPy, run unchanged under ``flamefuse fuse``."""
import sys

import numpy as np
import scipy.linalg
from scipy.linalg import solve_triangular

n = int(sys.argv[1])
rng = np.random.default_rng(0)
x = rng.standard_normal((n, n))
K = x @ x.T + n * np.eye(n)
y = rng.standard_normal(n)
L = scipy.linalg.cholesky(K, lower=True)
alpha = solve_triangular(L.T, solve_triangular(L, y, lower=True), lower=False)
print(f"{float(np.abs(K @ alpha - y).max()):.2e}")
