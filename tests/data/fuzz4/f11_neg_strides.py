"""The fourth camp's fuzz program on neg strides: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


a = np.arange(20.0)
r = a[::-1]
show("rev ops", lambda: r * 2 + a)
a[::-2] += 1
show("a[::-2]+=1", lambda: a)
M = np.arange(30.0).reshape(5, 6)
show("rev 2d", lambda: M[::-1, ::-2] + M[:, ::2][::-1])
show("flip cumsum", lambda: np.cumsum(np.flip(M, axis=1), axis=1))
N = M.copy()
N[::-1] = N
show("N[::-1]=N", lambda: N)
show("rev sum", lambda: M[::-1].sum(axis=0))
show("rev argmax", lambda: np.argmax(a[::-1]))
P = M[::-1, ::-1]
P *= -1
show("M after P*=-1", lambda: M)
show("rev strides", lambda: (M[::-1].strides, M[::-1].flags.c_contiguous))
q = np.arange(10.0)
q[8::-3] = q[:3]
show("q", lambda: q)
show("rev where", lambda: np.where(a[::-1] > 10, a, -a))
