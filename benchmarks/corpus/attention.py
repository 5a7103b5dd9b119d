"""Scaled dot-product attention per head: Q K^T, numerically stable softmax, times V.

Source: own version of Vaswani et al., "Attention is all you need" (2017), eq. 1, not copied.
python attention.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, heads=8, dim=64):
    rng = np.random.default_rng(19)
    Q = rng.standard_normal((heads, n, dim))
    K = rng.standard_normal((heads, n, dim))
    V = rng.standard_normal((heads, n, dim))
    return Q, K, V


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def kernel(Q, K, V):
    heads, n, dim = Q.shape
    out = np.empty_like(Q)
    for h in range(heads):
        scores = Q[h] @ K[h].T / np.sqrt(dim)
        out[h] = softmax(scores) @ V[h]
    return (out,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
