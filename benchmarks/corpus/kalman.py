"""Kalman filter tracking a 2-D constant-velocity target: 4x4 and 2x2 matrices in a Python loop.

Source: own version of the standard predict/update equations (Wikipedia "Kalman filter";
R. Labbe, "Kalman and Bayesian Filters in Python"), not copied.
python kalman.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    rng = np.random.default_rng(21)
    t = np.arange(n) * 0.1
    truth = np.stack([np.cos(0.05 * t) * t, np.sin(0.05 * t) * t], axis=1)
    z = truth + rng.normal(0.0, 0.5, truth.shape)
    return (z,)


def kernel(z):
    dt = 0.1
    F = np.array([[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)
    H = np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=float)
    Q = 0.01 * np.eye(4)
    R = 0.25 * np.eye(2)
    x = np.zeros(4)
    P = np.eye(4) * 10.0
    states = np.zeros((z.shape[0], 4))
    for k in range(z.shape[0]):
        x = F @ x
        P = F @ P @ F.T + Q
        y = z[k] - H @ x
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ y
        P = (np.eye(4) - K @ H) @ P
        states[k] = x
    return states, P


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
