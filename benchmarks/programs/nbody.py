"""Gravitational n-body simulation: all-pairs accelerations by broadcasting, leapfrog steps.

python nbody.py BODIES STEPS OUT.npy
"""
import sys
import time

import numpy as np

n, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(3)
pos = rng.standard_normal((n, 3))
vel = rng.standard_normal((n, 3)) * 0.1
mass = rng.random(n) + 0.5
dt, soft = 0.01, 0.1


def acceleration(pos):
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv3 = (dx ** 2 + dy ** 2 + dz ** 2 + soft ** 2) ** -1.5
    ax = (dx * inv3) @ mass
    ay = (dy * inv3) @ mass
    az = (dz * inv3) @ mass
    return np.stack([ax, ay, az], axis=1)


t0 = time.perf_counter()
acc = acceleration(pos)
for _ in range(steps):
    vel += acc * (dt / 2)
    pos += vel * dt
    acc = acceleration(pos)
    vel += acc * (dt / 2)
check = float(pos.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.concatenate([pos, vel]))
