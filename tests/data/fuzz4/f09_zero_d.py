"""The fourth camp's fuzz program on zero d: one line per probe, its value digest, error
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
