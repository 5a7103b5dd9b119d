"""doitgen: multiresolution tensor contraction A[r, q, :] = A[r, q, :] @ C4 (PolyBench doitgen).

Source: own version of PolyBench/C 4.2 ``doitgen``, not copied.
python doitgen.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    nr, nq, np_ = n, n + n // 5, n + n // 3
    A = np.fromfunction(lambda i, j, k: ((i * j + k) % np_) / np_, (nr, nq, np_))
    C4 = np.fromfunction(lambda i, j: (i * j % np_) / np_, (np_, np_))
    return A, C4


def kernel(A, C4):
    for r in range(A.shape[0]):
        for q in range(A.shape[1]):
            A[r, q, :] = A[r, q, :] @ C4
    return (A,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
