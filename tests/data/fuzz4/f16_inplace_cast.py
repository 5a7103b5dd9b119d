"""The fourth camp's fuzz program on inplace cast: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


n = 50000
a = np.arange(n)
show("int += float", lambda: a.__iadd__(1.5))
b = np.arange(n, dtype=np.float32)
b += np.float64(1e-8)
show("f32 += f64 scalar", lambda: b)
c = np.arange(n, dtype=np.int16)
c *= 3
show("i16 *= 3", lambda: c)
d = np.arange(n, dtype=np.uint8)
d -= 1
show("u8 -= 1", lambda: d)
e = np.ones(n)
e[::2] += np.arange(n // 2)
e[1::2] *= -1
show("strided updates", lambda: e)
f = np.linspace(0, 1, n)
f -= f.mean()
show("center", lambda: f)
g = np.arange(n, dtype=np.int32)
show("int -= mean", lambda: g.__isub__(g.mean()))
h = np.zeros(n)
np.add.at(h, np.arange(n) % 7, 1.0)
show("add.at", lambda: h[:10])
k = np.arange(n, dtype=np.float64)
k /= 0
show("k /= 0", lambda: k)
m = np.ones(n, dtype=bool)
m &= np.arange(n) % 3 == 0
show("bool &=", lambda: m.sum())
p = np.arange(n, dtype=np.int64)
p **= 2
show("**= 2", lambda: p)
q = np.arange(n, dtype=np.float64)
q[q > 100] = np.sqrt(q[q > 100])
show("masked sqrt assign", lambda: q)
