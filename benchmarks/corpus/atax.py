"""atax: y = A^T (A x), written as the original row loop (one dot and one axpy per row),
repeated as a power iteration (x = y / |y|).

Source: own version of PolyBench/C 4.2 ``atax`` kept in its loop form (as PolyBench/Python,
Abella-Gonzalez et al. CC 2021, lists it), not copied.
python atax.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, reps=10):
    m = n + n // 10
    rng = np.random.default_rng(1)
    A = rng.random((n, m))
    x = 1.0 + np.arange(m) / m
    return reps, A, x


def kernel(reps, A, x):
    for _ in range(reps):
        y = np.zeros(A.shape[1])
        for i in range(A.shape[0]):
            tmp = A[i, :] @ x
            y += A[i, :] * tmp
        x = y / np.sqrt(y @ y)
    return x, y


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
