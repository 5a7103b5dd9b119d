"""The fourth camp's fuzz program on astype views: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


n = 40000
a = np.linspace(-3, 3, n)
show("astype int", lambda: (a * 1000).astype(np.int16))
show("astype u8 wrap", lambda: (a * 100).astype(np.uint8))
show("astype f16", lambda: (a * 1e4).astype(np.float16))
show("astype bool", lambda: (a * 0).astype(bool).sum())
show("view int", lambda: (a * 2).view(np.int64)[:10])
v = (a * 2)
w = v.view(np.int64)
w[0] = 0
show("write via view", lambda: v[:3])
show("complex astype", lambda: (a + 1j * a).astype(np.complex64))
show("to float32 sum", lambda: a.astype(np.float32).sum())
show("nan to int", lambda: np.array([np.nan, np.inf, 1e30] * 10).astype(np.int64))
s = (a * 3).astype(np.float32)
s += 1e-7
show("f32 iadd small", lambda: s)
show("round trip", lambda: a.astype(np.float32).astype(np.float64) - a)
show("int8 cast overflow", lambda: np.full(n, 300.0).astype(np.int8)[:3])
