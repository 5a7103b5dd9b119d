"""The fourth camp's fuzz program on out: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


a = np.arange(10.0)
b = np.ones(10)
np.add(a, b, out=a)
show("add out a", lambda: a)
c = np.zeros(20)
np.multiply(a, 2, out=c[::2])
show("mul out strided", lambda: c)
show("out cast error", lambda: np.add(a, 1.5, out=np.zeros(10, int)))
d = np.zeros(10, int)
show("out unsafe", lambda: np.add(a, 1.5, out=d, casting="unsafe"))
show("d", lambda: d)
e = np.full(10, -1.0)
np.sqrt(a, out=e, where=a > 3)
show("where out", lambda: e)
s = np.zeros(())
np.sum(a, out=s)
show("sum out 0d", lambda: s)
r = np.zeros(3)
show("sum axis out", lambda: np.sum(np.arange(12.0).reshape(3, 4), axis=1, out=r) is r)
show("r", lambda: r)
show("out wrong shape", lambda: np.add(a, b, out=np.zeros(5)))
t = np.arange(6.0)
res = np.negative(t, out=t)
show("out is returned", lambda: res is t)
show("tuple out", lambda: np.divmod(np.arange(5), 2, out=(np.zeros(5, int), np.zeros(5, int)))[1])
show("clip out", lambda: np.clip(a, 2, 5, out=a))
show("a after", lambda: a)
