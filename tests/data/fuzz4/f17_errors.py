"""The fourth camp's fuzz program on errors: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


n = 40000
a = np.arange(n, dtype=float)
b = np.ones(n + 1)
show("bcast error", lambda: a + b)
show("bcast 2d", lambda: a.reshape(200, 200) + np.ones(199))
show("reshape error", lambda: a.reshape(3, -1))
show("index error", lambda: a[n])
show("str + array", lambda: a + "x")
show("bad axis", lambda: a.sum(axis=1))
show("inplace cast", lambda: np.arange(n).__iadd__(0.5))
show("out shape", lambda: np.sqrt(a, out=np.zeros(5)))
show("where shape", lambda: np.where(a > 5, a, np.ones(3)))
show("astype str", lambda: (a * 2).astype("U3")[:5])
show("int of array", lambda: int(a))
show("bool ambiguity", lambda: bool(a > 5))
show("concat dims", lambda: np.concatenate([a, a.reshape(200, 200)]))
c = a * 2
show("c after errors", lambda: c)
def loop():
    out = []
    x = np.linspace(0, 1, n)
    for k in range(4):
        try:
            x = x + np.ones(n - k)
            out.append(float(x.sum()))
        except ValueError as e:
            out.append(str(e))
    return out
show("errors in loop", loop)
