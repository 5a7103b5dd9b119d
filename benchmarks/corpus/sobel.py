"""Sobel edge detection: gradients by slicing, magnitude, angle and a threshold mask.

Source: own version of the Sobel operator (I. Sobel & G. Feldman; Wikipedia "Sobel
operator"), not copied.
python sobel.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    y, x = np.mgrid[0:n, 0:n] / n
    img = np.sin(12 * x) * np.cos(9 * y) + (x - 0.5) ** 2 + 0.2 * ((x + y) > 1.0)
    return (img,)


def kernel(img):
    p = img
    gx = ((p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:])
          - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2]))
    gy = ((p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:])
          - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:]))
    mag = np.sqrt(gx ** 2 + gy ** 2)
    angle = np.arctan2(gy, gx)
    edges = mag > 0.5 * mag.max()
    return mag, angle, edges


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
