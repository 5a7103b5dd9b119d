"""Shallow-water equations on a periodic square (Lax-Friedrichs steps with np.roll differences).

python shallow_water.py N STEPS OUT.npy
"""
import sys
import time

import numpy as np

n, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
g, dx, dt = 9.81, 1.0, 0.02
x = np.arange(n) - n / 2
X, Y = np.meshgrid(x, x)
h = 1.0 + 0.5 * np.exp(-(X ** 2 + Y ** 2) / (n / 8) ** 2)
u = np.zeros((n, n))
v = np.zeros((n, n))


def avg(a):
    return 0.25 * (np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1))


def ddx(a):
    return (np.roll(a, -1, 1) - np.roll(a, 1, 1)) / (2 * dx)


def ddy(a):
    return (np.roll(a, -1, 0) - np.roll(a, 1, 0)) / (2 * dx)


t0 = time.perf_counter()
for _ in range(steps):
    hu, hv = h * u, h * v
    h_new = avg(h) - dt * (ddx(hu) + ddy(hv))
    u_new = avg(u) - dt * (u * ddx(u) + v * ddy(u) + g * ddx(h))
    v_new = avg(v) - dt * (u * ddx(v) + v * ddy(v) + g * ddy(h))
    h, u, v = h_new, u_new, v_new
check = float(h.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.stack([h, u, v]))
