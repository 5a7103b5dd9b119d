"""Heat equation on a square plate: Jacobi sweeps of the 5-point stencil by slicing.

python heat.py N ITERS OUT.npy  (a NumPy program; ``flamefuse fuse heat.py N ITERS OUT.npy``)
"""
import sys
import time

import numpy as np

n, iters, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
grid = np.zeros((n, n))
grid[0, :] = 100.0
grid[:, 0] = 50.0
t0 = time.perf_counter()
for _ in range(iters):
    centre = grid[1:-1, 1:-1]
    centre[:] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])
check = float(grid.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, grid)
