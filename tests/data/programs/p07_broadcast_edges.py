"""Broadcasting with 0-size and 1-size dimensions; empty reductions; shape errors.

Idioms: the pairwise-distance "a[:, None, :] - b[None, :, :]"; column vectors from
x[:, np.newaxis]; empty batches at the end of a data loader; mean of an empty slice
(RuntimeWarning "Mean of empty slice")."""
import os
import sys
import pickle
import warnings

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
n = max(int(N ** 0.5), 4)

P = np.arange(n * 3, dtype=np.float64).reshape(n, 3) % 5
Q = np.arange(n * 3, dtype=np.float64).reshape(n, 3)[::-1] % 4
D = np.sqrt(((P[:, None, :] - Q[None, :, :]) ** 2).sum(axis=-1))
R["pairwise"] = D
R["nearest"] = D.argmin(axis=1)
col = np.arange(n, dtype=np.float64)[:, np.newaxis]
row = np.arange(n, dtype=np.float64)[np.newaxis, :]
R["outer_add"] = col + row
R["outer_cmp"] = col < row

E = np.zeros((0, 3))
R["empty_plus"] = E + np.ones(3)
R["empty_sum"] = E.sum()
R["empty_sum0"] = E.sum(axis=0)
R["empty_sum1"] = E.sum(axis=1)
R["empty_prod"] = E.prod(axis=0)
R["empty_any"] = E.any()
R["empty_all"] = E.all()
try:
    E.max()
except ValueError as ex:
    R["empty_max_err"] = str(ex)
R["empty_max_initial"] = E.max(initial=-1.0)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    R["empty_mean"] = E.mean()
    R["empty_mean0"] = E.mean(axis=0)
R["w_empty"] = sorted({str(w.message) for w in ws if issubclass(w.category, RuntimeWarning)})

x = np.arange(N, dtype=np.float64)
R["slice_empty"] = x[5:5] * 2 + 1
R["slice_empty_sum"] = x[10:3].sum()
R["one"] = x[:1] + x
R["size1_2d"] = x.reshape(1, -1) * x.reshape(-1, 1)[:3]
try:
    x + x[:-1]
except ValueError as ex:
    R["shape_err"] = str(ex)
try:
    x[:-1] += x
except ValueError as ex:
    R["shape_err_inplace"] = str(ex)
R["x_after"] = x
Z3 = np.ones((2, 0, 4))
R["z3_sum2"] = Z3.sum(axis=2)
R["z3_bcast"] = (Z3 * np.arange(4)).shape
R["zero_len_where"] = np.where(np.zeros(0, dtype=bool), 1.0, 2.0)
acc = np.zeros((n, 1))
acc += np.ones((1, n))[:, :1]
R["acc"] = acc
try:
    acc += np.ones((1, n))
except ValueError as ex:
    R["bcast_out_err"] = str(ex)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
