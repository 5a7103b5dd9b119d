"""Small simulations: Game of Life with np.roll on an int grid, an SIR model stepped with
Euler, 1-D heat diffusion with slices and a convergence check.

Idioms: the Game of Life "sum of eight np.roll shifts"; Euler integration with a history
array filled row by row; "while np.abs(new - old).max() > tol" loops."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
n = max(int(N ** 0.5), 8)

grid = ((np.arange(n * n).reshape(n, n) * 7919) % 5 == 0).astype(np.int8)
for _ in range(5):
    nb = sum(np.roll(np.roll(grid, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
    grid = ((nb == 3) | ((grid == 1) & (nb == 2))).astype(np.int8)
R["life"] = grid
R["alive"] = int(grid.sum())
R["nb_dtype"] = str(nb.dtype)

beta, gamma, dt = 0.3, 0.1, 0.1
steps = 200
hist = np.zeros((steps, 3))
s = np.array([0.99, 0.01, 0.0])
for k in range(steps):
    hist[k] = s
    ds = np.array([-beta * s[0] * s[1], beta * s[0] * s[1] - gamma * s[1], gamma * s[1]])
    s = s + dt * ds
R["sir"] = hist
R["peak"] = hist[:, 1].argmax()

u = np.zeros(N)
u[N // 3: 2 * N // 3] = 1.0
it = 0
while True:
    old = u.copy()
    u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
    it += 1
    if np.abs(u - old).max() < 0.05 or it > 40:
        break
R["heat"] = u
R["it"] = it

T = np.zeros((n, n))
T[0, :] = 100.0
for _ in range(10):
    T[1:-1, 1:-1] = 0.25 * (T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:])
R["laplace"] = T
pos = np.zeros((n, 2))
vel = np.stack([np.cos(np.arange(n)), np.sin(np.arange(n))], axis=1)
for _ in range(20):
    pos += vel * 0.1
    hit = np.abs(pos) > 1.0
    vel[hit] *= -1
    pos = np.clip(pos, -1.0, 1.0)
R["pos"], R["vel"] = pos, vel

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
