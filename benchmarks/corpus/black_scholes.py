"""Black-Scholes European call and put prices, with the polynomial normal CDF (A&S 26.2.17).

Source: own version of the closed-form Black-Scholes formula and the Abramowitz-Stegun
cumulative-normal approximation used by the classic benchmark codes, not copied.
python black_scholes.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(9)
    S = rng.uniform(5.0, 30.0, n)
    K = rng.uniform(1.0, 100.0, n)
    T = rng.uniform(0.25, 10.0, n)
    return S, K, T, 0.02, 0.30


def cnd(d):
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    w = 1.0 - 1.0 / np.sqrt(2 * np.pi) * np.exp(-d * d / 2.0) * (
        a1 * k + a2 * k ** 2 + a3 * k ** 3 + a4 * k ** 4 + a5 * k ** 5)
    return np.where(d < 0, 1.0 - w, w)


def kernel(S, K, T, r, v):
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    disc = np.exp(-r * T)
    call = S * cnd(d1) - K * disc * cnd(d2)
    put = K * disc * cnd(-d2) - S * cnd(-d1)
    return call, put


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
