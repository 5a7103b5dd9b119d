"""The fourth camp's fuzz program on masks: one line per probe, its value digest, error
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


rng = np.random.default_rng(3)
X = rng.standard_normal((6, 5))
m = X > 0
show("X[m]", lambda: X[m])
Y = X.copy()
Y[m] = 0
show("Y[m]=0", lambda: Y)
Z = X.copy()
Z[X < 0] = X[X < 0] * 2
show("Z neg double", lambda: Z)
rows = X[:, 0] > 0
show("rows", lambda: X[rows])
show("rows, col", lambda: X[rows, 1:3])
W = X.copy()
W[rows] *= -1
show("W[rows]*=-1", lambda: W)
show("where bcast", lambda: np.where(X > 0, X, np.arange(5.0)))
show("mask count", lambda: m.sum(axis=0))
show("nonzero", lambda: np.nonzero(m)[1])
show("empty mask", lambda: X[X > 100].sum())
show("mean of empty mask", lambda: X[X > 100].mean())
show("max of empty mask", lambda: X[X > 100].max())
show("bad mask", lambda: X[np.ones(5, bool)])
col_mask = np.array([True, False, True, False, True])
show("X[:, colmask]", lambda: X[:, col_mask])
V = X.copy()
V[:, col_mask] = np.arange(6.0)[:, None]
show("V[:, cm]=col", lambda: V)
show("~m & m.T?", lambda: ~m[:5, :5] & m[:5, :5].T)
show("m[None] bcast", lambda: (X * m)[m].sum())
