"""Random number streams: np.random.default_rng(0), legacy np.random.seed, RandomState.

Idioms: Monte Carlo estimate of pi; a random walk by cumsum of +-1 steps; bootstrap
resampling with rng.integers indices; rng.shuffle in place; legacy seed + randn."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

rng = np.random.default_rng(0)
pts = rng.random((N, 2))
inside = (pts ** 2).sum(axis=1) <= 1.0
R["pi"] = 4.0 * inside.mean()
steps = rng.choice([-1, 1], size=N)
walk = np.cumsum(steps)
R["walk_end"] = walk[-1]
R["walk_max"] = walk.max()
x = rng.normal(loc=2.0, scale=0.5, size=N)
x -= x.mean()
R["x"] = x
boot = np.array([x[rng.integers(0, N, size=200)].mean() for _ in range(20)])
R["boot"] = boot
perm = np.arange(N)
rng.shuffle(perm)
R["perm"] = perm
R["permutation"] = rng.permutation(10)
R["ints"] = rng.integers(0, 100, size=8)
y = rng.standard_normal(N).astype(np.float32)
y *= 2
R["y"] = y
R["uniform"] = rng.uniform(-1, 1, size=5)
z = rng.exponential(size=N)
z[z > 2] = 2
R["z"] = z

np.random.seed(0)
a = np.random.rand(N)
b = np.random.randn(N)
a += b * 0.1
R["legacy_a"] = a
R["legacy_int"] = np.random.randint(0, 10, size=6)
c = np.arange(N, dtype=np.float64)
np.random.shuffle(c)
R["legacy_shuffle"] = c[:20]
R["legacy_choice"] = np.random.choice(5, 4, replace=False)
rs = np.random.RandomState(42)
R["rs"] = rs.normal(size=5) + rs.uniform(size=5)
noise = rs.standard_normal(N)
signal = np.sin(np.linspace(0, 10, N)) + 0.1 * noise
R["snr"] = (signal ** 2).mean() / (0.01 * (noise ** 2).mean())
g2 = np.random.default_rng(0)
R["same_seed"] = g2.random((N, 2))[:3]

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
