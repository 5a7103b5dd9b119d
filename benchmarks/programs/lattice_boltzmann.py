"""D2Q9 lattice Boltzmann flow past a cylinder (BGK collisions, streaming with np.roll).

python lattice_boltzmann.py NX STEPS OUT.npy  (the channel is NX by NX/4)
"""
import sys
import time

import numpy as np

nx, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ny, tau = nx // 4, 0.6
cx = [0, 0, 1, 1, 1, 0, -1, -1, -1]
cy = [0, 1, 1, 0, -1, -1, -1, 0, 1]
w = [4 / 9, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36]
opposite = [0, 5, 6, 7, 8, 1, 2, 3, 4]
X, Y = np.meshgrid(np.arange(nx), np.arange(ny))
cylinder = (X - nx / 4) ** 2 + (Y - ny / 2) ** 2 < (ny / 4) ** 2
F = [np.ones((ny, nx)) + 0.01 * np.cos(2 * np.pi * X / nx * (i + 1)) for i in range(9)]
F[3] = F[3] + 2.0 * (1 + 0.2 * np.cos(2 * np.pi * Y / ny * 4))
t0 = time.perf_counter()
for _ in range(steps):
    F = [np.roll(np.roll(F[i], cx[i], axis=1), cy[i], axis=0) for i in range(9)]
    bounced = [np.where(cylinder, F[opposite[i]], F[i]) for i in range(9)]
    rho = sum(F)
    ux = sum(F[i] * cx[i] for i in range(9)) / rho
    uy = sum(F[i] * cy[i] for i in range(9)) / rho
    usq = ux * ux + uy * uy
    for i in range(9):
        cu = cx[i] * ux + cy[i] * uy
        feq = rho * w[i] * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * usq)
        F[i] = np.where(cylinder, bounced[i], F[i] - (F[i] - feq) / tau)
check = float(sum(F).sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.stack(F))
