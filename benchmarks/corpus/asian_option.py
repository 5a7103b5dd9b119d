"""Monte Carlo price of an arithmetic Asian call: geometric Brownian motion paths, step by step.

Source: own version of the standard Monte Carlo scheme (e.g. P. Glasserman, "Monte Carlo
Methods in Financial Engineering", ch. 3), not copied.
python asian_option.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, steps=100):
    rng = np.random.default_rng(10)
    return rng, n, steps, 100.0, 105.0, 0.03, 0.25, 1.0


def kernel(rng, n, steps, s0, strike, r, sigma, maturity):
    dt = maturity / steps
    drift = (r - 0.5 * sigma ** 2) * dt
    vol = sigma * np.sqrt(dt)
    s = np.full(n, s0)
    running = np.zeros(n)
    for _ in range(steps):
        s = s * np.exp(drift + vol * rng.standard_normal(n))
        running += s
    payoff = np.maximum(running / steps - strike, 0.0)
    price = np.exp(-r * maturity) * payoff.mean()
    stderr = payoff.std() / np.sqrt(n)
    return payoff, np.array([price, stderr])


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
