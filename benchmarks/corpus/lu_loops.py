"""LU factorisation without pivoting, Doolittle order, as loops over row and column slices.

Source: own version of PolyBench/C 4.2 ``lu`` with the innermost loop as a slice dot product,
not copied.
python lu_loops.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(5)
    A = rng.random((n, n)) + n * np.eye(n)
    return (A,)


def kernel(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return (A,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
