"""The fourth camp's fuzz program on scipy overwrite: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


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
