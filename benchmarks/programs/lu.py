"""Doolittle LU factorization without pivoting by slicing, rank-1 updates with np.outer.

python lu.py N REPEATS OUT.npy
"""
import sys
import time

import numpy as np

n, repeats, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(6)
A = rng.standard_normal((n, n)) + n * np.eye(n)
t0 = time.perf_counter()
for _ in range(repeats):
    a = A.copy()
    for k in range(n - 1):
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
check = float(a.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, a)
