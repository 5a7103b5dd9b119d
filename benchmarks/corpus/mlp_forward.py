"""Forward pass of a 3-layer perceptron on a batch: matmul, bias, ReLU, softmax; a few batches.

Source: own version of a textbook multilayer perceptron inference (as npbench's mlp), not copied.
python mlp_forward.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n, batches=4):
    rng = np.random.default_rng(24)
    X = rng.standard_normal((batches, n, 256)).astype(np.float32)
    W1 = rng.standard_normal((256, 512)).astype(np.float32) * 0.05
    b1 = rng.standard_normal(512).astype(np.float32) * 0.05
    W2 = rng.standard_normal((512, 256)).astype(np.float32) * 0.05
    b2 = rng.standard_normal(256).astype(np.float32) * 0.05
    W3 = rng.standard_normal((256, 10)).astype(np.float32) * 0.05
    b3 = rng.standard_normal(10).astype(np.float32) * 0.05
    return X, W1, b1, W2, b2, W3, b3


def relu(x):
    return np.maximum(x, 0)


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def kernel(X, W1, b1, W2, b2, W3, b3):
    outs = []
    for batch in X:
        h = relu(batch @ W1 + b1)
        h = relu(h @ W2 + b2)
        outs.append(softmax(h @ W3 + b3))
    return (np.stack(outs),)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
