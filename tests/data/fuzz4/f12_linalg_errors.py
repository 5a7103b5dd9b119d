"""The fourth camp's fuzz program on linalg errors: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


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
