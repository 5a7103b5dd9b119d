"""Conjugate gradient on a dense symmetric positive definite system, to a residual tolerance.

Source: own version of the textbook CG algorithm (Hestenes-Stiefel; e.g. Wikipedia
"Conjugate gradient method"), not copied.
python conjugate_gradient.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, iters=1000):
    rng = np.random.default_rng(8)
    M = rng.standard_normal((n, n)) / np.sqrt(n)
    A = M @ M.T + 0.01 * np.eye(n)
    b = rng.standard_normal(n)
    return iters, A, b


def kernel(iters, A, b):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        if np.sqrt(rs_new) < 1e-10 * np.linalg.norm(b):
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return (x,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
