"""Great-circle (haversine) distances between many pairs of points: element-wise trigonometry.

Source: own version of the haversine formula as in npbench's arc_distance (from the Pythran
benchmarks), not copied.
python arc_distance.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(22)
    t0, p0, t1, p1 = rng.random((4, n))
    return t0, p0, t1, p1


def kernel(theta_1, phi_1, theta_2, phi_2):
    temp = (np.sin((theta_2 - theta_1) / 2) ** 2
            + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2) ** 2)
    distance = 2 * np.arctan2(np.sqrt(temp), np.sqrt(1 - temp))
    return (distance,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
