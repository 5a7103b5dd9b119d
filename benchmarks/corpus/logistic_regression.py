"""Logistic regression trained by full-batch gradient descent (sigmoid, log-loss history).

Source: own version of the textbook gradient-descent fit (e.g. Bishop, PRML 4.3.2), not copied.
python logistic_regression.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, features=32, iters=150):
    rng = np.random.default_rng(18)
    X = rng.standard_normal((n, features))
    w_true = rng.standard_normal(features)
    y = (X @ w_true + 0.5 * rng.standard_normal(n) > 0).astype(np.float64)
    return X, y, iters, 0.1


def kernel(X, y, iters, lr):
    n, f = X.shape
    w = np.zeros(f)
    b = 0.0
    losses = []
    for _ in range(iters):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        losses.append(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
        err = p - y
        w -= lr * (X.T @ err) / n
        b -= lr * err.mean()
    return w, np.array(losses)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
