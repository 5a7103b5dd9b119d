"""X-ray projection of a phantom of spheres: rays from a point source to every detector
pixel, chord lengths through each sphere by ray-sphere intersection, Beer-Lambert attenuation.

python xray.py PIXELS SPHERES OUT.npy  (a PIXELS x PIXELS detector)
"""
import sys
import time

import numpy as np

n, spheres, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(13)
centres = rng.uniform(-0.5, 0.5, (spheres, 3)) * [1.0, 1.0, 0.5]
radii = rng.uniform(0.05, 0.2, spheres)
mu = rng.uniform(0.5, 3.0, spheres)
source = np.array([0.0, 0.0, -3.0])
u = np.linspace(-1.0, 1.0, n)
px, py = np.meshgrid(u, u)
t0 = time.perf_counter()
dx, dy, dz = px - source[0], py - source[1], 3.0 + 3.0 * np.ones((n, n))
norm = np.sqrt(dx * dx + dy * dy + dz * dz)
dx, dy, dz = dx / norm, dy / norm, dz / norm
path = np.zeros((n, n))
for s in range(spheres):
    ox, oy, oz = source - centres[s]
    b = ox * dx + oy * dy + oz * dz
    c = ox * ox + oy * oy + oz * oz - radii[s] ** 2
    disc = b * b - c
    chord = 2.0 * np.sqrt(np.maximum(disc, 0.0))
    path += mu[s] * chord
image = np.exp(-path)
check = float(image.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, image)
