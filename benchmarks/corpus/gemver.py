"""gemver: two rank-1 updates, then a transposed and a plain matrix-vector product (PolyBench).

Source: own version of PolyBench/C 4.2 ``gemver`` in the vectorised NumPy style of npbench
(github.com/spcl/npbench), not copied.
python gemver.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    fn = float(n)
    i = np.arange(n, dtype=np.float64)
    A = (i[:, None] * i[None, :] % n) / n
    u1 = i.copy()
    u2 = ((i + 1) / fn) / 2.0
    v1 = ((i + 1) / fn) / 4.0
    v2 = ((i + 1) / fn) / 6.0
    y = ((i + 1) / fn) / 8.0
    z = ((i + 1) / fn) / 9.0
    x = np.zeros(n)
    w = np.zeros(n)
    return 1.5, 1.2, A, u1, v1, u2, v2, w, x, y, z


def kernel(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x
    return A, x, w


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
