"""gesummv: y = alpha A x + beta B x, repeated with a normalised x (PolyBench gesummv).

Source: own version of PolyBench/C 4.2 ``gesummv``, not copied.
python gesummv.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, reps=8):
    rng = np.random.default_rng(7)
    A = rng.random((n, n))
    B = rng.random((n, n))
    x = rng.random(n)
    return reps, 1.5, 1.2, A, B, x


def kernel(reps, alpha, beta, A, B, x):
    for _ in range(reps):
        y = alpha * A @ x + beta * B @ x
        x = y / np.linalg.norm(y)
    return (x,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
