"""5x5 Gaussian blur by summing shifted slices of a padded image, a few passes.

Source: own version of direct 2-D convolution by slicing (as in scikit-image/SciPy tutorials
that avoid scipy.ndimage), not copied.
python blur_slicing.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, passes=3):
    rng = np.random.default_rng(12)
    img = rng.random((n, n))
    g = np.array([1.0, 4.0, 6.0, 4.0, 1.0])
    w = np.outer(g, g) / 256.0
    return passes, img, w


def kernel(passes, img, w):
    h, wd = img.shape
    for _ in range(passes):
        padded = np.pad(img, 2, mode="edge")
        out = np.zeros_like(img)
        for dy in range(5):
            for dx in range(5):
                out += w[dy, dx] * padded[dy:dy + h, dx:dx + wd]
        img = out
    return (img,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
