"""The fourth camp's fuzz program on nan: one line per probe, its value digest, error
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


rng = np.random.default_rng(12)
a = rng.standard_normal(40000)
a[::7] = np.nan
a[::11] = np.inf
show("max nan", lambda: a.max())
show("nanmax", lambda: np.nanmax(a))
show("maximum nan", lambda: np.maximum(a, 0.5))
show("fmax", lambda: np.fmax(a, 0.5))
show("argmax nan", lambda: np.argmax(a))
show("nansum", lambda: np.nansum(a))
show("nanmean", lambda: np.nanmean(a[a < 0]))
show("where nan", lambda: np.where(np.isnan(a), 0.0, a).sum())
show("sort nan", lambda: np.sort(a)[-5:])
show("nan compare", lambda: (a > 0).sum() + (a <= 0).sum())
show("inf - inf", lambda: (a - a))
show("sign", lambda: np.sign(a))
show("clip nan", lambda: np.clip(a, -1, 1))
show("mean", lambda: a.mean())
show("isclose", lambda: np.isclose(a, a).sum())
show("allclose", lambda: np.allclose(a, a, equal_nan=True))
b = a.copy()
b[np.isnan(b)] = -1
show("fill nan", lambda: b.sum())
