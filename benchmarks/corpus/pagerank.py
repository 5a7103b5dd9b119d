"""PageRank by power iteration on a dense column-stochastic link matrix, until converged.

Source: own version of the power method in Wikipedia "PageRank" (damping 0.85), not copied.
python pagerank.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(16)
    links = (rng.random((n, n)) < 0.01).astype(np.float64)
    links[np.arange(n), (np.arange(n) + 1) % n] = 1.0
    M = links / links.sum(axis=0, keepdims=True)
    return M, 0.85


def kernel(M, d):
    n = M.shape[0]
    r = np.full(n, 1.0 / n)
    history = []
    for _ in range(100):
        r_new = d * (M @ r) + (1.0 - d) / n
        delta = np.abs(r_new - r).sum()
        r = r_new
        history.append(delta)
        if delta < 1e-15:
            break
    return r, np.array(history)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
