"""Monte Carlo estimate of pi from uniform points in the unit square, in batches.

python monte_carlo_pi.py SAMPLES BATCHES OUT.npy
"""
import sys
import time

import numpy as np

n, batches, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(11)
t0 = time.perf_counter()
estimates = []
for _ in range(batches):
    x = rng.random(n)
    y = rng.random(n)
    inside = (x * x + y * y < 1.0).sum()
    estimates.append(4.0 * float(inside) / n)
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.array(estimates))
