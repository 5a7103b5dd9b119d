"""Generators yielding views and batches; a consumer that writes into what it receives.

Idioms: a mini-batch generator over shuffled indices (training loops), a sliding-window
generator yielding views, running statistics updated batch by batch (Welford-style mean)."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

data = np.arange(N, dtype=np.float64).reshape(-1, 4) if N % 4 == 0 else np.arange(N - N % 4, dtype=np.float64).reshape(-1, 4)


def batches(a, size):
    for start in range(0, len(a), size):
        yield a[start:start + size]


total = np.zeros(4)
count = 0
mean = np.zeros(4)
for bt in batches(data, 997):
    total += bt.sum(axis=0)
    count += len(bt)
    delta = bt.mean(axis=0) - mean
    mean += delta * len(bt) / count
    bt *= 0.5
R["total"], R["mean"], R["count"] = total, mean, count
R["data_after"] = data


def windows(x, w):
    for i in range(0, len(x) - w + 1, w // 2):
        yield x[i:i + w]


sig = np.sin(np.arange(N) * 0.05)
energies = [float((win ** 2).sum()) for win in windows(sig, 2048)]
R["energies"] = energies
maxes = np.array([win.max() for win in windows(sig * 2, 4096)])
R["maxes"] = maxes


def running(x):
    acc = np.zeros_like(x[0])
    for row in x:
        acc = acc + row
        yield acc


last = None
for last in running(data[:50]):
    pass
R["running_last"] = last
gen = (row * 2 for row in data[:5])
R["gen_list"] = [g.copy() for g in gen]
R["sum_gen"] = sum(row for row in data[:10])


def lazy_chunks(x):
    y = x + 1
    yield y
    y *= 2
    yield y


first, second = lazy_chunks(sig)
R["first_is_second"] = first is second
R["first"] = first

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
