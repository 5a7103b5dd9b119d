"""2-D finite-difference time-domain (Yee) electromagnetics kernel (PolyBench fdtd-2d).

Source: own version of PolyBench/C 4.2 ``fdtd-2d``, not copied.
python fdtd_2d.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, tmax=40):
    i = np.arange(n, dtype=np.float64)[:, None]
    j = np.arange(n + 10, dtype=np.float64)[None, :]
    ex = (i * (j + 1)) / n
    ey = (i * (j + 2)) / (n + 10)
    hz = (i * (j + 3)) / n
    fict = np.arange(tmax, dtype=np.float64)
    return tmax, ex, ey, hz, fict


def kernel(tmax, ex, ey, hz, fict):
    for t in range(tmax):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
