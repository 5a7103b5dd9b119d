"""Threads: a ThreadPoolExecutor filling disjoint slices of one output, per-thread
reductions, and a threading.Thread that updates a shared array under a lock.

Idioms: chunked parallel map with concurrent.futures over an array split with
np.array_split; results gathered with np.concatenate."""
import os
import sys
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

x = np.linspace(0.0, 10.0, N)
out = np.empty_like(x)
bounds = np.linspace(0, N, 5).astype(int)


def work(k):
    lo, hi = bounds[k], bounds[k + 1]
    seg = x[lo:hi]
    out[lo:hi] = np.sin(seg) * np.exp(-seg / 5.0)
    return float(seg.sum())


with ThreadPoolExecutor(max_workers=4) as pool:
    sums = list(pool.map(work, range(4)))
R["out"] = out
R["sums"] = sums


def chunk_stats(chunk):
    return chunk.mean(), chunk.max(), (chunk * chunk).sum()


with ThreadPoolExecutor(max_workers=3) as pool:
    stats = list(pool.map(chunk_stats, np.array_split(x * 2 - 3, 6)))
R["stats"] = [tuple(float(v) for v in s) for s in stats]

shared = np.zeros(N)
lock = threading.Lock()


def adder(k):
    for _ in range(3):
        with lock:
            shared[:] += k * np.floor(np.cos(x) * 8)


threads = [threading.Thread(target=adder, args=(k,)) for k in range(1, 4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
R["shared"] = shared
res = {}


def keyed(k):
    res[k] = np.cumsum(x[k::4] ** 2)[-1]


ts = [threading.Thread(target=keyed, args=(k,)) for k in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
R["keyed"] = [res[k] for k in range(4)]
R["concat"] = np.concatenate([out[:10], shared[-10:]])

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
