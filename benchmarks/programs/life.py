"""Conway's Game of Life on a torus, neighbours counted with np.roll.

python life.py N GENERATIONS OUT.npy
"""
import sys
import time

import numpy as np

n, gens, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(7)
board = (rng.random((n, n)) < 0.3).astype(np.int8)
t0 = time.perf_counter()
for _ in range(gens):
    neighbours = sum(np.roll(np.roll(board, dy, axis=0), dx, axis=1)
                     for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    board = ((neighbours == 3) | ((board == 1) & (neighbours == 2))).astype(np.int8)
check = int(board.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, board)
