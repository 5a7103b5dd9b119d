"""The fourth camp's fuzz program on errstate: one line per probe, its value digest, error
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


x = np.linspace(-2, 2, 9)
show("div default", lambda: 1 / x)
def quiet():
    with np.errstate(divide="ignore"):
        return 1 / x
show("div ignore", quiet)
def raising():
    with np.errstate(invalid="raise"):
        return np.sqrt(x)
show("sqrt raise", raising)
def nested():
    with np.errstate(all="ignore"):
        with np.errstate(over="raise"):
            return np.exp(x * 1000)
show("nested", nested)
old = np.seterr(divide="raise")
show("seterr returns", lambda: sorted(old.items()))
show("div raise", lambda: 1 / x)
np.seterr(**old)
show("restored", lambda: np.log(x))
def inner():
    with np.errstate(under="warn"):
        return np.exp(x * -500)
show("underflow warn", inner)
show("0/0", lambda: np.zeros(5) / np.zeros(5))
show("inf-inf", lambda: np.full(5, np.inf) - np.inf)
def call():
    seen = []
    with np.errstate(all="call", call=lambda kind, flag: seen.append(kind)):
        np.log(x)
    return seen
show("call handler", call)
show("geterr", lambda: sorted(np.geterr().items()))
