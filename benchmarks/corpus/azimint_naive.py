"""Azimuthal integration, naive: for each radial bin a boolean mask and the mean of the values.

Source: own version of npbench's azimint_naive (after the pyFAI tutorial), not copied.
python azimint_naive.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, npt=100):
    rng = np.random.default_rng(23)
    radius = rng.random(n)
    data = rng.random(n)
    return data, radius, npt


def kernel(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask = (r1 <= radius) & (radius < r2)
        values = data[mask]
        res[i] = values.mean()
    return (res,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
