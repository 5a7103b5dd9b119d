"""cumsum, diff, argsort, unique, searchsorted, histograms.

Idioms: the moving average by subtracting shifted cumsums ("ret[n:] = ret[n:] - ret[:-n]",
Stack Overflow "How to calculate rolling / moving average using NumPy"); unique with
return_counts; argsort to rank; np.diff with prepend."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

x = np.sin(np.arange(N) * 0.1) + (np.arange(N) % 5) * 0.01


def moving_average(a, n=3):
    ret = np.cumsum(a, dtype=float)
    ret[n:] = ret[n:] - ret[:-n]
    return ret[n - 1:] / n


R["ma3"] = moving_average(x)
R["ma10"] = moving_average(x, 10)
R["ma_int"] = moving_average(np.arange(N) % 7, 4)
b = np.cumsum(np.arange(N) % 9)
b[5:] = b[5:] - b[:-5]
R["window_int"] = b
R["diff"] = np.diff(x)
R["diff2"] = np.diff(x, n=2)
R["diff_prepend"] = np.diff(np.arange(N) % 4, prepend=0)
R["diff_bool"] = np.diff(x > 0)
R["sign_change"] = np.where(np.diff(np.sign(x)) != 0)[0]
order = np.argsort(x, kind="stable")
R["argsort"] = order
ranks = np.empty_like(order)
ranks[order] = np.arange(len(x))
R["ranks"] = ranks
R["sorted"] = np.sort(x)[::-1]
vals = (np.arange(N) * 7919) % 101
u, inv, counts = np.unique(vals, return_inverse=True, return_counts=True)
R["unique"], R["inverse"], R["counts"] = u, inv, counts
R["bincount"] = np.bincount(vals, weights=x)
R["searchsorted"] = np.searchsorted(np.sort(x), [-0.5, 0.0, 0.5])
hist, edges = np.histogram(x, bins=20, range=(-1.5, 1.5))
R["hist"], R["edges"] = hist, edges
R["digitize"] = np.digitize(x, edges[::4])
c = x.copy()
c.sort()
R["inplace_sort"] = c
R["cumprod"] = np.cumprod(1.0 + x[:50] * 1e-3)
R["cumsum_axis"] = np.cumsum(x.reshape(-1, 4) if N % 4 == 0 else x[: N - N % 4].reshape(-1, 4), axis=1)
R["lexsort"] = np.lexsort((x, vals))
R["percentile"] = np.percentile(x, [5, 50, 95])
R["median"] = np.median(x)
R["partition_k"] = np.partition(x, 10)[10]

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
