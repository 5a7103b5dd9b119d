"""Jacobi 2-D: two arrays updated alternately by the 5-point average (PolyBench jacobi-2d).

Source: own version of PolyBench/C 4.2 ``jacobi-2d`` (L.-N. Pouchet), written as the NumPy
ports in npbench (github.com/spcl/npbench) write it; not copied.
python jacobi_2d.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, tsteps=40):
    i = np.arange(n, dtype=np.float64)
    A = (i[:, None] * (i[None, :] + 2) + 2) / n
    B = (i[:, None] * (i[None, :] + 3) + 3) / n
    return tsteps, A, B


def kernel(tsteps, A, B):
    for _ in range(1, tsteps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A, B


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
