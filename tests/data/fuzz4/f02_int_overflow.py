"""The fourth camp's fuzz program on int overflow: one line per probe, its value digest, error
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


a = np.arange(1, 40, dtype=np.int32) * 100000
show("cumsum i32", lambda: np.cumsum(a * a))
show("cumprod i64", lambda: np.cumprod(np.arange(1, 30)))
show("sum i8", lambda: np.arange(100, dtype=np.int8).sum())
show("sum i8 dtype", lambda: np.arange(100, dtype=np.int8).sum(dtype=np.int8))
show("abs min", lambda: np.abs(np.array([-128, -5, 3], dtype=np.int8)))
show("neg u8", lambda: -np.arange(5, dtype=np.uint8))
show("pow overflow", lambda: np.arange(2, 40) ** 20)
show("left shift", lambda: np.arange(60, 70) << 3)
show("mul i64", lambda: np.full(10, 2**62) * 4)
show("int min // -1", lambda: np.array([np.iinfo(np.int64).min] * 8) // -1)
show("int8 mean", lambda: np.arange(-100, 100, dtype=np.int8).mean())
show("uint64 - int", lambda: np.arange(10, dtype=np.uint64) - 20)
x = np.arange(50, dtype=np.int16) * 1000
x += 30000
show("inplace wrap", lambda: x)
show("int //0", lambda: np.arange(10) // np.arange(10))
show("astype wrap", lambda: (np.arange(10) * 1e10).astype(np.int32))
