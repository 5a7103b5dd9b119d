"""The fourth camp's fuzz program on errors: one line per probe, its value digest, error
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
