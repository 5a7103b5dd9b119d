"""bicg: the BiCG sub-kernel s = A^T r, q = A p, as a row loop (PolyBench bicg),
repeated with the results normalised as the next inputs.

Source: own version of PolyBench/C 4.2 ``bicg`` with its inner loop vectorised, not copied.
python bicg.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, reps=10):
    m = n - n // 8
    rng = np.random.default_rng(2)
    A = rng.random((n, m))
    p = np.arange(m) % m / m
    r = np.arange(n) % n / n
    return reps, A, p, r


def kernel(reps, A, p, r):
    for _ in range(reps):
        s = np.zeros(A.shape[1])
        q = np.zeros(A.shape[0])
        for i in range(A.shape[0]):
            s += r[i] * A[i, :]
            q[i] = A[i, :] @ p
        p = s / np.abs(s).max()
        r = q / np.abs(q).max()
    return s, q


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
