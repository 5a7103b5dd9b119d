"""The fourth camp's fuzz program on f16 c64: one line per probe, its value digest, error
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


h = np.linspace(0, 10, 101).astype(np.float16)
show("f16 sum", lambda: h.sum())
show("f16 mean", lambda: h.mean())
show("f16 mul", lambda: h * h)
show("f16 overflow", lambda: h * 7000)
show("f16 + f32", lambda: h + np.float32(1))
show("f16 exp", lambda: np.exp(h))
z = (np.arange(12) + 1j * np.arange(12)[::-1]).astype(np.complex64)
show("c64 mul", lambda: z * z)
show("c64 * 2.5", lambda: z * 2.5)
show("c64 * f64 scalar", lambda: z * np.float64(2.5))
show("c64 abs", lambda: np.abs(z))
show("c64 sum", lambda: z.sum())
show("c64 mean", lambda: z.mean())
show("c64 / z", lambda: z / (z + 1))
show("angle", lambda: np.angle(z))
show("conj", lambda: np.conj(z) * z)
show("c64 sqrt", lambda: np.sqrt(z))
show("c128 exp", lambda: np.exp(z.astype(np.complex128) / 3))
show("c64 power 2", lambda: z ** 2)
show("c64 big", lambda: (z * 1e30) * (z * 1e30))
show("real/imag", lambda: (z.real * 2 + z.imag).dtype)
w = z.copy()
w.imag = 0
show("set imag", lambda: w)
