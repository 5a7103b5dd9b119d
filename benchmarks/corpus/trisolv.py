"""Forward substitution L x = b, one row at a time, for a few right-hand sides (PolyBench trisolv).

Source: own version of PolyBench/C 4.2 ``trisolv``, not copied.
python trisolv.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(3)
    L = np.tril(rng.random((n, n))) / n + np.eye(n)
    B = rng.random((8, n))
    return L, B


def kernel(L, B):
    X = np.zeros_like(B)
    for b, x in zip(B, X):
        for i in range(b.shape[0]):
            x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return (X,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
