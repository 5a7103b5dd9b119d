"""Levinson-Durbin recursion for a Toeplitz system (PolyBench durbin), vector slices per step.

Source: own version of PolyBench/C 4.2 ``durbin``, not copied.
python durbin.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    r = 0.5 ** np.arange(1, n + 1) + 1e-3 * np.cos(np.arange(n))
    return (r,)


def kernel(r):
    n = r.shape[0]
    y = np.zeros(n)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(r[k - 1::-1], y[:k])) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha
    return (y,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
