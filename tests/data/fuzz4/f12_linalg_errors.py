"""The fourth camp's fuzz program on linalg errors: one line per probe, its value digest, error
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


A = np.array([[1.0, 2.0], [2.0, 4.0]])
show("inv singular", lambda: np.linalg.inv(A))
show("inv nonsquare", lambda: np.linalg.inv(np.ones((2, 3))))
show("solve singular", lambda: np.linalg.solve(A, np.ones(2)))
show("solve shape", lambda: np.linalg.solve(np.eye(3), np.ones(2)))
show("cholesky not pd", lambda: np.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])))
show("det singular", lambda: np.linalg.det(A))
show("slogdet", lambda: np.linalg.slogdet(A)[0])
show("eig nan", lambda: np.linalg.eigvals(np.array([[np.nan, 1.0], [0.0, 1.0]])))
show("norm", lambda: np.linalg.norm(np.arange(5.0)))
show("lstsq", lambda: np.linalg.lstsq(np.ones((3, 2)), np.arange(3.0), rcond=None)[0])
show("matrix_rank", lambda: np.linalg.matrix_rank(A))
show("pinv", lambda: np.linalg.pinv(A))
B = np.eye(3) * 2
show("inv ok", lambda: np.linalg.inv(B) @ B)
show("solve ok", lambda: np.linalg.solve(B * 1.0, np.arange(3.0)))
show("cholesky ok", lambda: np.linalg.cholesky(B + 1))
show("inv int", lambda: np.linalg.inv(np.eye(3, dtype=int) * 2))
show("inv f32", lambda: np.linalg.inv(np.eye(3, dtype=np.float32) * 4))
show("inv 0x0", lambda: np.linalg.inv(np.zeros((0, 0))))
show("matmul mismatch", lambda: np.ones((2, 3)) @ np.ones((2, 3)))
show("inv inf", lambda: np.linalg.inv(np.array([[np.inf, 1.0], [1.0, 2.0]])))
