"""Cholesky factorisation, left-looking, element by element with slice dot products.

Source: own version of PolyBench/C 4.2 ``cholesky`` in the form of issue 29 (as npbench's NumPy
port writes it), not copied.
python cholesky.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(4)
    M = rng.random((n, n))
    A = M @ M.T + n * np.eye(n)
    return (A,)


def kernel(A):
    n = A.shape[0]
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return (np.tril(A),)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
