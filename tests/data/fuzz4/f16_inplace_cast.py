"""The fourth camp's fuzz program on inplace cast: one line per probe, its value digest, error
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
