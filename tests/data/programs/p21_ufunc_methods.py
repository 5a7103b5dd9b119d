"""ufunc methods and reductions with out=, where=, keepdims, axis tuples, initial=.

Idioms: histogram-style scatter-add "np.add.at(counts, idx, 1)" and "np.maximum.at";
segment sums by "np.add.reduceat(x, starts)"; running products "np.multiply.accumulate";
"x.sum(axis=(0, 2), keepdims=True)" in batch-norm code; reductions into a preallocated
out= row of a result matrix."""
import os
import sys
import pickle
import warnings

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

x = np.sin(np.arange(N) * 0.7) * 10
idx = (np.arange(N) * 7) % 23
acc = np.zeros(23)
np.add.at(acc, idx, x)
R["add_at"] = acc
mx = np.full(23, -np.inf)
np.maximum.at(mx, idx, x)
R["max_at"] = mx
cnt = np.zeros(23, dtype=np.int32)
np.add.at(cnt, idx, 1)
R["cnt_at"] = cnt
neg = np.arange(10.0)
np.negative.at(neg, [0, 0, 3])
R["neg_at"] = neg
starts = np.array([0, 5, 5, 40, N - 3])
R["reduceat"] = np.add.reduceat(x, starts)
R["reduceat_max"] = np.maximum.reduceat(x, starts[::-1][1:][::-1])
R["accumulate"] = np.multiply.accumulate(1 + x[:20] * 0.01)
R["accumulate_int"] = np.add.accumulate(np.arange(N) % 5, dtype=np.int8)
M = x[: (N // 6) * 6].reshape(-1, 6)
R["acc_axis1"] = np.add.accumulate(M, axis=1)
R["max_acc0"] = np.maximum.accumulate(M, axis=0)
R["outer"] = np.subtract.outer(x[:5], x[:4])
R["outer_int"] = np.multiply.outer(np.arange(4), np.arange(3, dtype=np.uint8))
T3 = x[: (N // 12) * 12].reshape(-1, 3, 4)
R["sum_02k"] = T3.sum(axis=(0, 2), keepdims=True)
R["sum_neg_tuple"] = T3.sum(axis=(-1, -3))
R["mean_tuple_k"] = T3.mean(axis=(0, 1), keepdims=True)
R["max_tuple"] = np.max(T3, axis=(1, 2))
R["std_tuple"] = T3.std(axis=(0, 2))
R["var_k"] = T3.var(axis=0, keepdims=True, ddof=1)
R["reduce_none"] = np.add.reduce(T3, axis=None)
R["reduce_where"] = np.add.reduce(x, where=x > 0, initial=0.5)
R["reduce_keep"] = np.multiply.reduce(M[:5] * 0.1 + 1, axis=0, keepdims=True)
R["min_where"] = np.min(M, axis=1, where=M > 0, initial=np.inf)
R["any_k"] = np.any(M > 9, axis=1, keepdims=True)
R["all_tuple"] = np.all(T3 > -11, axis=(0, 1))
out = np.zeros((3, 6))
np.sum(M, axis=0, out=out[1])
np.max(M, axis=0, out=out[2])
R["reduce_out_rows"] = out
o0 = np.empty(())
r0 = np.add.reduce(x, out=o0)
R["out0d"] = o0
R["out0d_is"] = r0 is o0
ok = np.zeros((1, 6))
np.mean(M, axis=0, keepdims=True, out=ok)
R["mean_out_keep"] = ok
oi = np.zeros(6, dtype=np.int64)
try:
    np.sum(M, axis=0, out=oi)
except Exception as ex:
    R["sum_out_cast_err"] = (type(ex).__name__, str(ex))
try:
    np.sum(M, axis=0, out=oi, casting="unsafe")
except TypeError as ex:
    R["sum_casting_kw"] = str(ex)
np.add.reduce(M.astype(np.int64), axis=0, out=oi)
R["sum_out_unsafe"] = oi
R["cumsum_out"] = np.cumsum(x[:30], out=np.empty(30))
R["cumprod_axis"] = np.cumprod(M[:4] * 0.1, axis=1)
R["cumsum_dtype"] = np.cumsum(np.arange(N, dtype=np.int8), dtype=np.int16)
R["nancumsum"] = np.nancumsum(np.where(x > 5, np.nan, x))
R["count_nonzero"] = np.count_nonzero(M > 0, axis=0)
R["sum_bool_axis"] = (M > 0).sum(axis=1, dtype=np.uint8)
R["argmax_k"] = M.argmax(axis=1, keepdims=True)
R["argmin_flat"] = int(M.argmin())
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    R["mean_where_none"] = np.mean(M, axis=1, where=M > 100)
R["w_mean_where"] = sorted({str(w.message) for w in ws})
try:
    M.sum(axis=2)
except Exception as ex:
    R["axis_err"] = (type(ex).__name__, str(ex))
try:
    M.sum(axis=(0, 0))
except Exception as ex:
    R["dup_axis_err"] = (type(ex).__name__, str(ex))
try:
    np.add.reduce(M, axis=1, out=np.zeros(3))
except Exception as ex:
    R["out_shape_err"] = (type(ex).__name__, str(ex))

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
