"""The SPD inverse the way NumPy users write it, at module level."""
import sys

import numpy as np

n = int(sys.argv[1])
rng = np.random.default_rng(1)
X = rng.standard_normal((n, n))
A = X.T @ X + n * np.eye(n)


def spd_inverse(a):
    L = np.linalg.cholesky(a)
    Li = np.linalg.inv(L)
    return Li.T @ Li


C = spd_inverse(A)
print(f"{float(np.abs(C @ A - np.eye(n)).max()):.2e}")
