"""The fourth camp's fuzz program on empty: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


e = np.zeros(0)
show("sum", lambda: e.sum())
show("prod", lambda: e.prod())
show("mean", lambda: e.mean())
show("max", lambda: e.max())
show("argmax", lambda: np.argmax(e))
E = np.zeros((0, 3))
show("sum axis0", lambda: E.sum(axis=0))
show("mean axis0", lambda: E.mean(axis=0))
show("max axis1", lambda: E.max(axis=1))
show("max axis0", lambda: E.max(axis=0))
show("concat", lambda: np.concatenate([e, np.arange(3.0), e]))
show("empty ops", lambda: e * 2 + 1)
show("empty where", lambda: np.where(e > 0, e, 1.0))
show("std", lambda: np.std(e))
show("empty bcast", lambda: np.zeros((0, 1)) + np.ones(4))
show("empty mask", lambda: np.arange(5.0)[np.zeros(5, bool)])
show("min initial", lambda: e.min(initial=np.inf))
show("cumsum empty", lambda: np.cumsum(e))
show("dot empty", lambda: np.zeros((3, 0)) @ np.zeros((0, 4)))
show("empty any/all", lambda: (e.any(), e.all()))
show("var ddof", lambda: np.var(np.ones(1), ddof=1))
