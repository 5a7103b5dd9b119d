"""The fourth camp's fuzz program on out: one line per probe, its value digest, error
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
