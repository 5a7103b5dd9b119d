"""All-pairs gravitational n-body with broadcast pairwise differences, leap-frog steps.

Source: own version of the direct-summation scheme as in P. Mocz's tutorial "Create Your Own
N-body Simulation (With Python)" (pairwise dx = x.T - x), not copied.
python nbody_broadcast.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, steps=10):
    rng = np.random.default_rng(14)
    mass = 20.0 * np.ones((n, 1)) / n
    pos = rng.standard_normal((n, 3))
    vel = rng.standard_normal((n, 3))
    vel -= np.mean(mass * vel, 0) / np.mean(mass)
    return steps, pos, vel, mass


def acceleration(pos, mass, G=1.0, soft=0.1):
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r3 = (dx ** 2 + dy ** 2 + dz ** 2 + soft ** 2) ** (-1.5)
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return np.hstack((ax, ay, az))


def kernel(steps, pos, vel, mass, dt=0.01):
    acc = acceleration(pos, mass)
    for _ in range(steps):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = acceleration(pos, mass)
        vel += acc * dt / 2.0
    kinetic = 0.5 * np.sum(mass * vel ** 2)
    return pos, vel, np.array([kinetic])


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
