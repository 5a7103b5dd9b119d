"""The fourth camp's fuzz program on intdiv: one line per probe, its value digest, error
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
i = np.arange(-n // 2, n // 2)
show("i // 7", lambda: i // 7)
show("i % -7", lambda: i % -7)
show("i // 0", lambda: i // 0)
show("i % 0", lambda: i % 0)
show("divmod", lambda: np.divmod(i, -3)[1])
f = i * 0.5
show("f // 0.0", lambda: f // 0.0)
show("f % 0.0", lambda: f % 0.0)
show("f % -1.5", lambda: f % -1.5)
show("fmod", lambda: np.fmod(f, -1.5))
show("round half even", lambda: np.round(f * 0.2))
show("round 2", lambda: np.round(f / 3, 2))
show("i8 // -1", lambda: np.full(n, -128, np.int8) // np.int8(-1))
show("u8 // 0", lambda: np.arange(n, dtype=np.uint8) // 0)
show("true div ints", lambda: i / i)
show("int pow neg exp", lambda: i ** -1)
show("float pow", lambda: f ** 2.5)
show("floor", lambda: np.floor(f / 7) == f // 7)
