"""Floyd-Warshall all-pairs shortest paths: np.minimum with a broadcast row and column per k.

Source: own version of PolyBench/C 4.2 ``floyd-warshall`` vectorised over i and j, not copied.
python floyd_warshall.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    i, j = np.indices((n, n))
    path = (i * j % 7 + 1).astype(np.float64)
    path[(i + j) % 13 == 0] = 999.0
    path[(i + j) % 7 == 0] = 999.0
    path[(i - j) % 11 == 0] = 999.0
    return (path,)


def kernel(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path, path[:, k, None] + path[None, k, :])
    return (path,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
