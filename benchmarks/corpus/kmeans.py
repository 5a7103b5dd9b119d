"""k-means clustering (Lloyd's algorithm): broadcast distances, argmin labels, masked means.

Source: own version of Lloyd's algorithm (Wikipedia "k-means clustering"), not copied.
python kmeans.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, k=8, iters=15):
    rng = np.random.default_rng(17)
    centres = rng.uniform(-10, 10, (k, 3))
    X = centres[rng.integers(0, k, n)] + rng.standard_normal((n, 3))
    return X, X[:k].copy(), iters


def kernel(X, centroids, iters):
    k = centroids.shape[0]
    for _ in range(iters):
        d2 = ((X[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        labels = np.argmin(d2, axis=1)
        for j in range(k):
            members = X[labels == j]
            if len(members):
                centroids[j] = members.mean(axis=0)
    inertia = np.min(d2, axis=1).sum()
    return centroids, labels, np.array([inertia])


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
