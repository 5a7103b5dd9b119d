"""Elementary cellular automaton (rule 110) on a ring: neighbourhood code, rule lookup by shifts.

Source: own version of S. Wolfram's elementary cellular automata (Wikipedia "Rule 110"),
not copied.
python rule110.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, steps=300):
    rng = np.random.default_rng(20)
    cells = (rng.random(n) < 0.3).astype(np.int64)
    return cells, steps, 110


def kernel(cells, steps, rule):
    counts = np.zeros(steps, dtype=np.int64)
    for t in range(steps):
        left = np.roll(cells, 1)
        right = np.roll(cells, -1)
        code = (left << 2) | (cells << 1) | right
        cells = (rule >> code) & 1
        counts[t] = cells.sum()
    return cells, counts


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
