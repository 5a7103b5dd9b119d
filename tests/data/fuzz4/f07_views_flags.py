"""The fourth camp's fuzz program on views flags: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


a = np.arange(24.0).reshape(4, 6)
t = a.T
show("T flags", lambda: (t.flags["C_CONTIGUOUS"], t.flags["F_CONTIGUOUS"], t.flags["OWNDATA"]))
show("T base is a", lambda: t.base is a)
s = a[::2, 1:]
show("slice flags", lambda: (s.flags.c_contiguous, s.flags.writeable, s.flags.owndata))
show("slice base", lambda: s.base is a)
r = a.reshape(-1)
show("reshape base", lambda: r.base is a)
c = a.copy()
show("copy owndata", lambda: (c.flags.owndata, c.base is None))
b = a * 2
show("result base", lambda: b.base is None)
v = b.view()
show("view base", lambda: v.base is b)
b.flags.writeable = False
show("write ro", lambda: b.__setitem__(0, 1))
show("view of ro", lambda: b[1:].flags.writeable)
f = np.asfortranarray(a)
show("fortran", lambda: (f.flags.f_contiguous, f.strides))
show("strides", lambda: (a.strides, a.T.strides, a[::2].strides))
d = a[:, 2]
show("col", lambda: (d.flags.c_contiguous, d.strides))
show("shares", lambda: np.shares_memory(a, d))
show("may share", lambda: np.may_share_memory(a, a * 1))
e = np.ascontiguousarray(a.T)
show("ascontig", lambda: (e.flags.c_contiguous, e.base is None))
