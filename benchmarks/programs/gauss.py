"""Gaussian elimination without pivoting by slicing (a diagonally dominant matrix).

python gauss.py N REPEATS OUT.npy
"""
import sys
import time

import numpy as np

n, repeats, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(5)
A = rng.standard_normal((n, n)) + n * np.eye(n)
b = rng.standard_normal(n)
t0 = time.perf_counter()
for _ in range(repeats):
    a = np.hstack([A, b[:, None]])
    for k in range(n - 1):
        f = a[k + 1:, k] / a[k, k]
        a[k + 1:, k:] -= f[:, None] * a[k, k:]
    x = np.zeros(n)
    for k in range(n - 1, -1, -1):
        x[k] = (a[k, n] - a[k, k + 1:n] @ x[k + 1:]) / a[k, k]
check = float(x.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, x)
