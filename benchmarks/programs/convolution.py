"""Image smoothing: a 5x5 binomial filter as shifted slices, then np.convolve of a signal.

python convolution.py N PASSES OUT.npy
"""
import sys
import time

import numpy as np

n, passes, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(9)
image = rng.random((n, n))
weights = np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]) / 256.0
t0 = time.perf_counter()
for _ in range(passes):
    smooth = np.zeros((n - 4, n - 4))
    for i in range(5):
        for j in range(5):
            smooth += weights[i, j] * image[i:n - 4 + i, j:n - 4 + j]
    image[2:-2, 2:-2] = smooth
signal = np.convolve(image[n // 2], np.ones(9) / 9, mode="same")
check = float(image.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.concatenate([image.ravel(), signal]))
