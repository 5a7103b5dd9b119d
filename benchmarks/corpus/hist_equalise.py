"""Histogram equalisation of an 8-bit image: bincount, cumulative sum, lookup table.

Source: own version of the algorithm in Wikipedia "Histogram equalization", not copied.
python hist_equalise.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(13)
    base = rng.normal(90.0, 25.0, (n, n))
    img = np.clip(base, 0, 255).astype(np.uint8)
    return (img,)


def kernel(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) / (img.size - cdf_min) * 255.0)
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    out = lut[img]
    contrast = out.astype(np.float64).std() / img.astype(np.float64).std()
    return out, hist, np.array([contrast])


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
