"""The fourth camp's fuzz program on ufunc methods: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


n = 40000
a = np.arange(n, dtype=float) % 17
show("reduce keepdims", lambda: np.add.reduce(a.reshape(200, 200), axis=1, keepdims=True))
show("accumulate", lambda: np.multiply.accumulate(a[:50] + 1))
show("outer", lambda: np.subtract.outer(a[:300], a[:200]))
h = np.zeros(17)
np.add.at(h, a.astype(int), 1)
show("add.at", lambda: h)
show("reduceat", lambda: np.add.reduceat(a, [0, 100, 5000, 39999]))
show("maximum.reduce where", lambda: np.maximum.reduce(a, where=a < 10, initial=-1))
show("sum where", lambda: np.sum(a, where=a > 3))
show("mean where", lambda: np.mean(a.reshape(200, 200), axis=0, where=a.reshape(200, 200) > 8))
o = np.empty(200)
np.add.reduce(a.reshape(200, 200), axis=0, out=o)
show("reduce out", lambda: o)
show("logical_and.reduce", lambda: np.logical_and.reduce(a > -1))
show("divide.reduce", lambda: np.divide.reduce(a[1:20] + 1))
show("minimum.accumulate", lambda: np.minimum.accumulate(a[::-1])[:40])
