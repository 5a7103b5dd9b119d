"""syrk: C = alpha A A^T + beta C, lower triangle, row by row with a k loop of axpys (PolyBench).

Source: own version of PolyBench/C 4.2 ``syrk``, not copied.
python syrk.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    m = n - n // 4
    A = np.fromfunction(lambda i, j: ((i * j + 1) % n) / n, (n, m))
    C = np.fromfunction(lambda i, j: ((i * j + 2) % m) / m, (n, n))
    return 1.5, 1.2, C, A


def kernel(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[:i + 1, k] * A[i, k]
    return (C,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
