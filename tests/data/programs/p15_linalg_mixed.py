"""np.linalg mixed with element-wise code.

Idioms: least squares by np.linalg.lstsq versus the normal equations; fitting a
polynomial with np.vander; solve of a diagonally dominant system; row norms with
np.linalg.norm(axis=1); symmetric eigenvalues of a covariance; inv then element-wise."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
n = max(min(int(N ** 0.5), 200), 5)

t = np.linspace(0, 1, N)
yv = 3.0 * t ** 2 - 2.0 * t + 0.5 + 0.01 * np.sin(50 * t)
V = np.vander(t, 3)
coef, res, rank, sv = np.linalg.lstsq(V, yv, rcond=None)
R["lstsq"], R["rank"], R["sv"] = coef, rank, sv
coef2 = np.linalg.solve(V.T @ V, V.T @ yv)
R["normal_eq"] = coef2
R["fit_resid"] = yv - V @ coef2
R["polyfit"] = np.polyfit(t, yv, 2)

i = np.arange(n)
A = 1.0 / (1.0 + np.abs(i[:, None] - i[None, :])) + n * np.eye(n)
b = np.cos(i * 0.3)
xs = np.linalg.solve(A, b)
R["solve"] = xs
R["resid"] = A @ xs - b
Ainv = np.linalg.inv(A)
R["inv_scaled"] = Ainv * 2.0 + 1.0
R["det"] = np.linalg.det(A[:5, :5])
R["slogdet"] = np.linalg.slogdet(A)
L = np.linalg.cholesky(A)
R["chol"] = L
R["chol_recon"] = L @ L.T - A
R["norm_rows"] = np.linalg.norm(A, axis=1)
R["norm_fro"] = np.linalg.norm(A)
C = np.cov(np.vstack([np.sin(t), np.cos(t), t]))
w, Vec = np.linalg.eigh(C)
R["eigh_w"] = w
R["eigh_v_abs"] = np.abs(Vec)
R["matrix_power"] = np.linalg.matrix_power(A[:4, :4], 3)
R["dot_int"] = np.arange(12).reshape(3, 4) @ np.arange(4)
R["einsum"] = np.einsum("ij,j->i", A, b)
R["outer"] = np.outer(b[:5], b[:5])
R["A_f32_chol"] = np.linalg.cholesky(A.astype(np.float32))
P = A.copy()
P /= np.linalg.norm(P, axis=0, keepdims=True)
R["P"] = P
R["trace"] = np.trace(A)
Ag = A.copy()
Ag[0] = Ag[1]
try:
    np.linalg.inv(Ag[:3, :3])
    R["sing"] = "ok"
except np.linalg.LinAlgError as ex:
    R["sing"] = str(ex)
R["pinv"] = np.linalg.pinv(V[:10])
R["qr_r"] = np.abs(np.linalg.qr(V[:50])[1])
R["cond"] = np.linalg.cond(A[:6, :6])

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
