"""Monte Carlo pi with the legacy global generator (np.random.seed / np.random.rand), in chunks.

Source: own version of the classic dart-throwing estimate as tutorials write it, not copied.
python mc_pi_legacy.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, chunks=10):
    np.random.seed(42)
    return n, chunks


def kernel(n, chunks):
    hits = 0
    for _ in range(chunks):
        x = np.random.rand(n)
        y = np.random.rand(n)
        hits += np.count_nonzero(x * x + y * y <= 1.0)
    pi = 4.0 * hits / (n * chunks)
    return (np.array([pi, hits]),)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
