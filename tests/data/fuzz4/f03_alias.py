"""The fourth camp's fuzz program on alias: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


a = np.arange(20.0)
a[1:] += a[:-1]
show("a[1:]+=a[:-1]", lambda: a)
b = np.arange(20.0)
b[:-1] += b[1:]
show("b[:-1]+=b[1:]", lambda: b)
c = np.arange(16.0).reshape(4, 4)
c += c.T
show("c+=c.T", lambda: c)
d = np.arange(10.0)
d[::-1] = d
show("d[::-1]=d", lambda: d)
e = np.arange(12.0)
np.add(e[:-1], e[1:], out=e[1:])
show("add out overlap", lambda: e)
f = np.arange(12.0)
f[::2] *= f[1::2]
show("f[::2]*=f[1::2]", lambda: f)
g = np.arange(9.0).reshape(3, 3)
g[:, 0], g[:, 2] = g[:, 2], g[:, 0].copy()
show("swap cols", lambda: g)
h = np.arange(10.0)
v = h[2:7]
v *= 10
h[3] = -1
show("view write", lambda: (h, v))
show("v then", lambda: v)
k = np.ones((4, 4))
k[1:, 1:] = k[:-1, :-1] * 2 + k[1:, 1:]
show("stencil self", lambda: k)
m = np.arange(6.0)
m[m > 2] = m[:3][::-1]
show("mask assign view", lambda: m)
