"""Covariance matrix filled column by column (PolyBench covariance, NumPy column loop).

Source: own version of PolyBench/C 4.2 ``covariance`` in the per-column style of npbench's
NumPy port (github.com/spcl/npbench), not copied.
python covariance.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    m = n
    npts = n + n // 5
    data = np.fromfunction(lambda i, j: (i * j) / m, (npts, m))
    return float(npts), data


def kernel(float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    m = data.shape[1]
    cov = np.zeros((m, m))
    for i in range(m):
        cov[i:m, i] = cov[i, i:m] = data[:, i] @ data[:, i:m] / (float_n - 1.0)
    return (cov,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
