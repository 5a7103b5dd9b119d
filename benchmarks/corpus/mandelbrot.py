"""Mandelbrot set escape counts with boolean masks (only the points still inside iterate).

Source: own version of the masked NumPy Mandelbrot as in N. Rougier, "From Python to Numpy"
(ch. 4) and issue 29, not copied.
python mandelbrot.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, maxiter=80):
    x = np.linspace(-2.25, 0.75, n)
    y = np.linspace(-1.25, 1.25, n)
    C = x[None, :] + 1j * y[:, None]
    return C, maxiter


def kernel(C, maxiter):
    Z = np.zeros_like(C)
    N = np.zeros(C.shape, dtype=np.int64)
    for n in range(maxiter):
        I = np.abs(Z) < 2.0
        N[I] = n
        Z[I] = Z[I] ** 2 + C[I]
    N[N == maxiter - 1] = 0
    return (N,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
