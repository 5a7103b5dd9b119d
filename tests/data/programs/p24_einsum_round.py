"""np.einsum contractions, np.clip with array bounds, np.round/around with negative decimals,
np.cumsum/np.diff along axes, np.trace/np.diag of products.

Idioms: batched dot products "np.einsum('ij,ij->i', a, b)", bilinear forms
"np.einsum('i,ij,j', x, A, x)", outer products "np.einsum('i,j->ij')"; rounding money to cents
(np.round(x, 2)) and to hundreds (np.round(x, -2)); banker's rounding of .5;
"np.clip(x, lo, hi)" with per-column bounds."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

n = max(int(N ** 0.5), 4)
A = np.sin(np.arange(n * n, dtype=np.float64).reshape(n, n) * 0.37)
B = np.cos(np.arange(n * n, dtype=np.float64).reshape(n, n) * 0.11)
x = np.linspace(-1, 1, n)
R["ein_rowdot"] = np.einsum("ij,ij->i", A, B)
R["ein_bilinear"] = np.einsum("i,ij,j", x, A, x)
R["ein_outer"] = np.einsum("i,j->ij", x, x[:3])
R["ein_trace"] = np.einsum("ii", A)
R["ein_diag"] = np.einsum("ii->i", A)
R["ein_T"] = np.einsum("ij->ji", A)
R["ein_mm"] = np.einsum("ij,jk->ik", A, B)
R["ein_batch"] = np.einsum("bij,bj->bi", np.stack([A, B]), np.stack([x, x[::-1]]))
R["ein_sum"] = np.einsum("ij->", A)
R["ein_int"] = np.einsum("i,i", np.arange(10), np.arange(10))
R["ein_opt"] = np.einsum("ij,jk,kl->il", A, B, A, optimize=True)
R["ein_ellipsis"] = np.einsum("...i,...i->...", A, B)
try:
    np.einsum("ij,jk->ik", A, B[:2])
except ValueError as ex:
    R["ein_err"] = str(ex)
R["trace"] = np.trace(A @ B)
R["diag_prod"] = np.diag(A @ B)
y = np.linspace(-3.75, 3.75, N)
R["round2"] = np.round(y * 1.005, 2)
R["round0"] = np.round(y)
R["round_half_even"] = np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5]))
R["round_neg"] = np.round(y * 1000, -2)
R["round_int_neg"] = np.round(np.arange(N) * 7, -1)
R["round_int"] = np.round(np.arange(N) * 7)
R["around_f32"] = np.around(y.astype(np.float32), 1)
R["method_round"] = (y * 10).round(1)
R["py_round"] = round(float(y[3]), 3)
R["py_round_np"] = round(y[3], 3)
R["py_round_type"] = type(round(y[3])).__name__
R["rint"] = np.rint(y)
R["floor_ceil_trunc"] = (np.floor(y), np.ceil(y), np.trunc(y), np.fix(y))
lo = np.array([-1.0, 0.0, 0.5])
hi = np.array([0.0, 1.0, 2.0])
Y = y[: (N // 3) * 3].reshape(-1, 3)
R["clip_arr"] = np.clip(Y, lo, hi)
R["clip_none_lo"] = np.clip(Y, None, 0.5)
R["clip_none_hi"] = np.clip(Y, -0.5, None)
R["clip_swapped"] = np.clip(Y, 1.0, -1.0)
R["clip_method"] = Y.clip(min=0)
R["clip_int"] = np.clip(np.arange(N) - 50, 0, 100)
R["clip_nan"] = np.clip(np.array([np.nan, 1.0, -5.0]), -1, 1)
R["cumsum_ax0"] = np.cumsum(Y, axis=0)
R["cumsum_ax1"] = Y.cumsum(axis=1)
R["cumprod_flat"] = np.cumprod(Y[:5] + 2)
R["diff_ax0"] = np.diff(Y, axis=0)
R["diff_n2_ax1"] = np.diff(Y, n=2, axis=1)
R["diff_append"] = np.diff(Y[:, 0], append=[0.0])
R["diff_n0"] = np.diff(Y[:, 0], n=0)
R["diff_uint"] = np.diff(np.array([5, 3, 8], dtype=np.uint8))
R["ediff1d"] = np.ediff1d(Y[:5, 0], to_begin=-1)
R["gradient"] = np.gradient(Y[:, 1])
R["trapz"] = np.trapezoid(Y[:, 2], dx=0.1)
R["interp"] = np.interp([0.1, 0.55], x, x ** 2)
R["convolve"] = np.convolve(x, [0.25, 0.5, 0.25], mode="same")

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
