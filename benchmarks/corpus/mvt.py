"""mvt: x1 += A y1 and x2 += A^T y2, vectorised, repeated (PolyBench mvt).

Source: own version of PolyBench/C 4.2 ``mvt``, not copied.
python mvt.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, reps=15):
    i = np.arange(n, dtype=np.float64)
    A = (i[:, None] * i[None, :] % n) / n
    x1 = (i % n) / n
    x2 = ((i + 1) % n) / n
    y1 = ((i + 3) % n) / n
    y2 = ((i + 4) % n) / n
    return reps, A, x1, x2, y1, y2


def kernel(reps, A, x1, x2, y1, y2):
    for _ in range(reps):
        x1 += A @ y1
        x2 += y2 @ A
        x1 /= np.abs(x1).max()
        x2 /= np.abs(x2).max()
    return x1, x2


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
