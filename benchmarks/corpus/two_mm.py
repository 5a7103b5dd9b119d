"""2mm: D = alpha A B C + beta D (PolyBench 2mm), two matrix products and a scaled update.

Source: own version of PolyBench/C 4.2 ``2mm``, not copied.
python two_mm.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    ni, nj, nk, nl = n, n + n // 10, n + n // 5, n + n // 4
    A = np.fromfunction(lambda i, k: ((i * k + 1) % ni) / ni, (ni, nk))
    B = np.fromfunction(lambda k, j: (k * (j + 1) % nj) / nj, (nk, nj))
    C = np.fromfunction(lambda j, l: ((j * (l + 3) + 1) % nl) / nl, (nj, nl))
    D = np.fromfunction(lambda i, l: (i * (l + 2) % nk) / nk, (ni, nl))
    return 1.5, 1.2, A, B, C, D


def kernel(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D
    return (D,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
