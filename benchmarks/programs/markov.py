"""Markov chain: a random transition matrix, its powers by matrix-matrix products, and a
distribution evolved step by step until it settles.

python markov.py STATES STEPS OUT.npy
"""
import sys
import time

import numpy as np

n, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(17)
P = rng.random((n, n)) ** 4
t0 = time.perf_counter()
P = P / P.sum(axis=1, keepdims=True)
Q = np.identity(n)
for _ in range(8):
    Q = Q @ P
p = np.full(n, 1.0 / n)
for _ in range(steps):
    p = p @ P
    p = p / p.sum()
gap = float(np.abs(Q[0] - p).max())
check = float(p.sum())
print(f"TIME {time.perf_counter() - t0:.6f}")
np.save(out, np.concatenate([p, Q[0], [gap]]))
