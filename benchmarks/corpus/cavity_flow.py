"""Lid-driven cavity flow: incompressible Navier-Stokes with a pressure-Poisson iteration.

Source: own version of step 11 of L. Barba's "CFD Python: 12 steps to Navier-Stokes"
(github.com/barbagroup/CFDPython, also npbench's cavity_flow), not copied.
python cavity_flow.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, nt=60, nit=20):
    u = np.zeros((n, n))
    v = np.zeros((n, n))
    p = np.zeros((n, n))
    return nt, nit, u, v, p


def build_rhs(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = rho * (
        1.0 / dt * ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx) + (v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dy))
        - ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx)) ** 2
        - 2 * ((u[2:, 1:-1] - u[:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, :-2]) / (2 * dx))
        - ((v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dy)) ** 2)


def pressure_poisson(nit, p, dx, dy, b):
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, :-2]) * dy ** 2 + (pn[2:, 1:-1] + pn[:-2, 1:-1]) * dx ** 2)
                         / (2 * (dx ** 2 + dy ** 2))
                         - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0.0


def kernel(nt, nit, u, v, p):
    n = u.shape[0]
    dx = dy = 2.0 / (n - 1)
    rho, nu = 1.0, 0.1
    dt = 0.2 * dx * dx / nu
    b = np.zeros((n, n))
    for _ in range(nt):
        un = u.copy()
        vn = v.copy()
        build_rhs(b, rho, dt, u, v, dx, dy)
        pressure_poisson(nit, p, dx, dy, b)
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                         + nu * (dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                                 + dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
                         - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                         + nu * (dt / dx ** 2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
                                 + dt / dy ** 2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return u, v, p


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
