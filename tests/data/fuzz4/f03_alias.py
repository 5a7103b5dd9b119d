"""The fourth camp's fuzz program on alias: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import hashlib
import warnings

import numpy as np


def show(label, f):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            v = f()
            if hasattr(v, "dtype") and hasattr(v, "shape"):
                a = np.asarray(v)
                kind = "0d" if a.ndim == 0 else "array"
                body = repr(a.tolist()) if a.dtype.kind in "OUSMm" or a.size < 6 else \
                    hashlib.md5(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]
                out = (kind, a.dtype.str, a.shape, body)
            else:
                out = repr(v)
        except Exception as e:  # noqa: BLE001
            out = f"{type(e).__name__}: {e}"
    ws = [w for w in ws if w.category.__name__ != "FallbackWarning"]
    print(label, out, [(w.category.__name__, str(w.message)) for w in ws])


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
