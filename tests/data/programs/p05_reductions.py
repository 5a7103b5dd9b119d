"""Reductions with axis, keepdims, dtype, where= and initial=.

Idioms: row normalisation "m / m.sum(axis=1, keepdims=True)"; column means; np.mean with
where= to skip masked values; max with initial= on possibly empty slices."""
import os
import sys
import pickle
import warnings

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
n = max(int(N ** 0.5), 4)
A = (np.arange(n * n, dtype=np.float64).reshape(n, n) % 13) - 6.0

R["sum0"] = A.sum(axis=0)
R["sum1k"] = A.sum(axis=1, keepdims=True)
R["rownorm"] = A / np.abs(A).sum(axis=1, keepdims=True)
R["sum_f32"] = A.sum(dtype=np.float32)
R["sum_all"] = A.sum()
R["sum_tuple"] = A.reshape(n, n, 1).sum(axis=(0, 2))
R["mean_where"] = np.mean(A, where=A > 0)
R["mean_where_axis"] = np.mean(A, axis=1, where=A > 0)
R["sum_where"] = np.sum(A, axis=0, where=A < 0)
R["max_initial"] = np.max(A, axis=1, initial=100.0)
R["max_where"] = np.max(A, axis=0, where=A < 3, initial=-50.0)
R["min_neg_axis"] = A.min(axis=-1)
R["prod_int"] = np.prod(np.arange(1, 40, dtype=np.int64))
R["prod_f"] = np.prod(A[:3] / 3.0 + 1.0, axis=0)
R["any"] = np.any(A > 5, axis=0)
R["all"] = (A > -7).all(axis=1)
R["std"] = A.std(axis=0)
R["var_ddof"] = A.var(axis=1, ddof=1)
R["mean_i32"] = np.arange(N, dtype=np.int32).mean()
R["mean_f32"] = np.ones(N, dtype=np.float32).mean()
R["mean_f32_dtype"] = np.arange(N, dtype=np.float32).mean(dtype=np.float64)
R["argmin"] = A.argmin(axis=0)
R["ptp"] = np.ptp(A, axis=1)
R["add_reduce"] = np.add.reduce(A, axis=1)
R["max_reduce"] = np.maximum.reduce(A, axis=0)
R["cummax"] = np.maximum.accumulate(A[:, 0])
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    R["mean_empty_where"] = np.mean(A, axis=0, where=np.zeros_like(A, dtype=bool))
R["w_empty"] = sorted({str(w.message) for w in ws if issubclass(w.category, RuntimeWarning)})
R["average"] = np.average(A, axis=0, weights=np.arange(n) + 1.0)
R["sum_bool_axis"] = (A > 0).sum(axis=1)
R["sum_u8"] = (np.arange(N) % 200).astype(np.uint8).sum()
R["sum_keep_scalar"] = A.sum(keepdims=True)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
