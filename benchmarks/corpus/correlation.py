"""Correlation matrix filled column by column (PolyBench correlation, NumPy column loop).

Source: own version of PolyBench/C 4.2 ``correlation`` in the per-column style of npbench's
NumPy port (github.com/spcl/npbench), not copied. (Issue 29's RecursionError case.)
python correlation.py N OUT.npz
"""
import sys
import time

import numpy as np


def initialize(n):
    m = n
    npts = n + n // 5
    data = np.fromfunction(lambda i, j: (i * j) / m + i, (npts, m))
    return float(npts), data


def kernel(float_n, data):
    m = data.shape[1]
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(m)
    for i in range(m - 1):
        corr[i + 1:m, i] = corr[i, i + 1:m] = data[:, i] @ data[:, i + 1:m]
    return (corr,)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    data = initialize(n)
    t0 = time.perf_counter()
    result = kernel(*data)
    checksum = sum(float(np.sum(r)) for r in result)
    print(f"TIME {time.perf_counter() - t0:.6f}")
    np.savez(out, *result)
