"""Quasicrystal pattern: the sum of plane waves at K evenly spaced orientations, for a few phases.

python quasicrystal.py N FRAMES OUT.npy  (7 orientations)
"""
import sys
import time

import numpy as np

n, frames, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
k, scale = 7, 0.2
x = np.linspace(-n / 2, n / 2, n)
X, Y = np.meshgrid(x, x)
t0 = time.perf_counter()
total = np.zeros((n, n))
for f in range(frames):
    phase = 2 * np.pi * f / frames
    field = np.zeros((n, n))
    for i in range(k):
        theta = np.pi * i / k
        field += np.cos(scale * (X * np.cos(theta) + Y * np.sin(theta)) + phase)
    total += (np.tanh(field) + 1.0) / 2.0
check = float(total.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, total)
