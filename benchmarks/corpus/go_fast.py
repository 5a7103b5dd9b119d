"""Numba's introductory example: a Python loop of tanh over the diagonal, then a broadcast add.

Source: own version of the "go_fast" example of Numba's 5-minute guide (also in npbench),
not copied.
python go_fast.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, reps=5):
    x = np.arange(n * n, dtype=np.float64).reshape(n, n) / (n * n)
    return x, reps


def kernel(a, reps):
    for _ in range(reps):
        trace = 0.0
        for i in range(a.shape[0]):
            trace += np.tanh(a[i, i])
        a = a + trace / a.shape[0]
    return (a,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
