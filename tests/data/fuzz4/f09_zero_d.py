"""The fourth camp's fuzz program on zero d: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


a = np.array(3.0)
show("0d + 1", lambda: a + 1)
show("0d * arr", lambda: a * np.arange(4.0))
b = np.array(5)
b[()] = 7
show("0d set", lambda: b)
show("0d item", lambda: b.item())
show("0d sum", lambda: a.sum())
show("0d bool", lambda: bool(a > 2))
show("0d index err", lambda: a[0])
c = np.arange(5.0)
s = c.sum()
show("scalar type", lambda: type(s).__name__)
show("scalar ops", lambda: s * 2 + 1)
show("scalar in array op", lambda: c / s)
d = np.zeros(())
d += 5
show("0d iadd", lambda: d)
show("0d reshape", lambda: np.arange(1.0).reshape(()))
show("0d ndim", lambda: (a.ndim, a.shape, a.size))
show("float(0d)", lambda: float(a) + int(b))
e = c[2]
show("elem type", lambda: type(e).__name__)
show("0d astype", lambda: np.array(2.7).astype(int))
show("0d max axis", lambda: a.max(axis=0))
show("0d compare", lambda: np.array(1.0) == np.array([1.0, 2.0]))
