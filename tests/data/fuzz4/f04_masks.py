"""The fourth camp's fuzz program on masks: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


rng = np.random.default_rng(3)
X = rng.standard_normal((6, 5))
m = X > 0
show("X[m]", lambda: X[m])
Y = X.copy()
Y[m] = 0
show("Y[m]=0", lambda: Y)
Z = X.copy()
Z[X < 0] = X[X < 0] * 2
show("Z neg double", lambda: Z)
rows = X[:, 0] > 0
show("rows", lambda: X[rows])
show("rows, col", lambda: X[rows, 1:3])
W = X.copy()
W[rows] *= -1
show("W[rows]*=-1", lambda: W)
show("where bcast", lambda: np.where(X > 0, X, np.arange(5.0)))
show("mask count", lambda: m.sum(axis=0))
show("nonzero", lambda: np.nonzero(m)[1])
show("empty mask", lambda: X[X > 100].sum())
show("mean of empty mask", lambda: X[X > 100].mean())
show("max of empty mask", lambda: X[X > 100].max())
show("bad mask", lambda: X[np.ones(5, bool)])
col_mask = np.array([True, False, True, False, True])
show("X[:, colmask]", lambda: X[:, col_mask])
V = X.copy()
V[:, col_mask] = np.arange(6.0)[:, None]
show("V[:, cm]=col", lambda: V)
show("~m & m.T?", lambda: ~m[:5, :5] & m[:5, :5].T)
show("m[None] bcast", lambda: (X * m)[m].sum())
