"""2-D Ising model: checkerboard Metropolis sweeps with np.roll neighbour sums and masks.

Source: own version of the textbook checkerboard Metropolis algorithm (e.g. Newman & Barkema,
"Monte Carlo Methods in Statistical Physics"), not copied.
python ising.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, sweeps=60):
    rng = np.random.default_rng(11)
    spins = np.where(rng.random((n, n)) < 0.5, -1, 1).astype(np.int64)
    return spins, rng, sweeps, 0.44


def kernel(spins, rng, sweeps, beta):
    n = spins.shape[0]
    i, j = np.indices((n, n))
    colours = [(i + j) % 2 == 0, (i + j) % 2 == 1]
    magnetisation = []
    for _ in range(sweeps):
        for c in range(2):
            nb = (np.roll(spins, 1, 0) + np.roll(spins, -1, 0)
                  + np.roll(spins, 1, 1) + np.roll(spins, -1, 1))
            dE = 2.0 * spins * nb
            flip = colours[c] & ((dE <= 0) | (rng.random((n, n)) < np.exp(-beta * dE)))
            spins = np.where(flip, -spins, spins)
        magnetisation.append(spins.mean())
    return spins, np.array(magnetisation)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
