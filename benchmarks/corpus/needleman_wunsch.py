"""Needleman-Wunsch global alignment score matrix, one row at a time (linear gap penalty).

Source: own version of the algorithm in Wikipedia "Needleman-Wunsch algorithm"; each row's
left-to-right dependency is resolved with np.maximum.accumulate (a standard NumPy trick),
not copied.
python needleman_wunsch.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(15)
    a = rng.integers(0, 4, n)
    b = rng.integers(0, 4, n + n // 10)
    return a, b, 2.0, -1.0, 1.0


def kernel(a, b, match, mismatch, gap):
    m = b.shape[0]
    H = np.zeros((a.shape[0] + 1, m + 1))
    H[0, :] = -gap * np.arange(m + 1)
    H[:, 0] = -gap * np.arange(a.shape[0] + 1)
    ramp = gap * np.arange(m + 1)
    for i in range(1, a.shape[0] + 1):
        score = np.where(b == a[i - 1], match, mismatch)
        best = np.maximum(H[i - 1, :-1] + score, H[i - 1, 1:] - gap)
        row = np.empty(m + 1)
        row[0] = H[i, 0]
        row[1:] = best
        H[i, :] = np.maximum.accumulate(row + ramp) - ramp
    return (H,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
