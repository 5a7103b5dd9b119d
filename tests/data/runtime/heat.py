import numpy as np

g = np.zeros((50, 40))
g[0, :] = 100.0
delta = 1.0
iterations = 0
while delta > 0.5:
    c = g[1:-1, 1:-1]
    work = 0.2 * (c + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2] + g[2:, 1:-1])
    delta = np.sum(np.abs(work - c))
    c[:] = work
    iterations += 1
print(f"iterations {iterations} total {float(np.sum(g)):.6f}")
