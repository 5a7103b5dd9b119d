"""The fourth camp's fuzz program on scipy overwrite: one line per probe, its value digest, error
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


import scipy.linalg as sla
rng = np.random.default_rng(5)
M = rng.standard_normal((120, 120))
A = M @ M.T + 120 * np.eye(120)
B = rng.standard_normal((120, 4))
Af = np.asfortranarray(A * 1.0)
c = sla.cholesky(Af, overwrite_a=True)
show("chol overwrite", lambda: Af)
Af2 = np.asfortranarray(A * 1.0)
lu, piv = sla.lu_factor(Af2, overwrite_a=True)
show("lu overwrite", lambda: Af2)
Bf = np.asfortranarray(B * 1.0)
x = sla.lu_solve((lu, piv), Bf, overwrite_b=True)
show("lu_solve overwrite b", lambda: Bf)
cf, low = sla.cho_factor(A * 1.0)
show("cho_factor c", lambda: cf)
y = sla.cho_solve((cf, low), B[:, 0] * 1.0, overwrite_b=True)
show("cho_solve", lambda: y)
L = np.tril(A)
b1 = B[:, 1] * 1.0
z = sla.solve_triangular(L, b1, lower=True, overwrite_b=True)
show("solve_tri b", lambda: b1)
show("solve", lambda: sla.solve(A * 1.0, B * 1.0))
show("inv", lambda: sla.inv(np.asfortranarray(A * 1.0), overwrite_a=True))
show("det", lambda: sla.det(A))
