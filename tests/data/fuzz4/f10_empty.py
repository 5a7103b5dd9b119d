"""The fourth camp's fuzz program on empty: one line per probe, its value digest, error
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


e = np.zeros(0)
show("sum", lambda: e.sum())
show("prod", lambda: e.prod())
show("mean", lambda: e.mean())
show("max", lambda: e.max())
show("argmax", lambda: np.argmax(e))
E = np.zeros((0, 3))
show("sum axis0", lambda: E.sum(axis=0))
show("mean axis0", lambda: E.mean(axis=0))
show("max axis1", lambda: E.max(axis=1))
show("max axis0", lambda: E.max(axis=0))
show("concat", lambda: np.concatenate([e, np.arange(3.0), e]))
show("empty ops", lambda: e * 2 + 1)
show("empty where", lambda: np.where(e > 0, e, 1.0))
show("std", lambda: np.std(e))
show("empty bcast", lambda: np.zeros((0, 1)) + np.ones(4))
show("empty mask", lambda: np.arange(5.0)[np.zeros(5, bool)])
show("min initial", lambda: e.min(initial=np.inf))
show("cumsum empty", lambda: np.cumsum(e))
show("dot empty", lambda: np.zeros((3, 0)) @ np.zeros((0, 4)))
show("empty any/all", lambda: (e.any(), e.all()))
show("var ddof", lambda: np.var(np.ones(1), ddof=1))
