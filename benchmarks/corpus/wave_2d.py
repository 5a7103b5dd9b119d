"""2-D wave equation, leap-frog finite differences with three rotating time levels.

Source: own version of the textbook explicit scheme u_next = 2u - u_prev + c^2 lap(u)
(e.g. H. P. Langtangen, "Finite difference methods for wave motion"), not copied.
python wave_2d.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, steps=60):
    x = np.linspace(-1.0, 1.0, n)
    X, Y = np.meshgrid(x, x)
    u = np.exp(-40.0 * ((X - 0.2) ** 2 + Y ** 2))
    u_prev = u.copy()
    return steps, u_prev, u


def kernel(steps, u_prev, u):
    c2 = 0.25
    u_next = np.zeros_like(u)
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next[1:-1, 1:-1] = 2.0 * u[1:-1, 1:-1] - u_prev[1:-1, 1:-1] + c2 * lap
        u_prev, u, u_next = u, u_next, u_prev
    energy = np.sum(u ** 2)
    return u, np.array([energy])


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
