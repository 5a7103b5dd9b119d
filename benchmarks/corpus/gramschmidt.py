"""Modified Gram-Schmidt QR: one column at a time, the trailing columns updated by a rank-1 step.

Source: own version of PolyBench/C 4.2 ``gramschmidt`` with the j loop vectorised, not copied.
python gramschmidt.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(6)
    A = rng.random((n + n // 5, n))
    return (A,)


def kernel(A):
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        nrm = A[:, k] @ A[:, k]
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])
    return Q, R


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
