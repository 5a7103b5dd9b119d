"""NaN/inf propagation, np.errstate and the warnings NumPy gives.

Idioms: z-score with a zero-variance column ("Normalization: how to avoid zero standard
deviation", np.nan_to_num afterwards); log of zero under np.errstate(divide='ignore');
np.seterr(all='raise') turning a division into FloatingPointError."""
import os
import sys
import pickle
import warnings

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}


def runtime_warnings(ws):
    return [(w.category.__name__, str(w.message)) for w in ws if issubclass(w.category, RuntimeWarning)]


x = np.linspace(-2.0, 2.0, N)
x[::7] = 0.0
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    r1 = 1.0 / x
    r2 = np.log(x)
    r3 = np.sqrt(x)
    r4 = x / x
R["r1"], R["r2"], R["r3"], R["r4"] = r1, r2, r3, r4
R["w1"] = runtime_warnings(ws)

with np.errstate(divide="ignore", invalid="ignore"):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        q = np.where(x != 0, np.log(np.abs(x)) / x, 0.0)
R["q"] = q
R["w2"] = runtime_warnings(ws)

cols = 4
X = np.arange(N * cols, dtype=np.float64).reshape(N, cols) % 11
X[:, 2] = 3.0
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
R["Z"] = Z
R["w3"] = runtime_warnings(ws)
R["Z_fixed"] = np.nan_to_num(Z, nan=1.0)
R["nanmean"] = np.nanmean(Z, axis=0)
R["nansum"] = np.nansum(r2)
R["max_nan"] = np.max(r4)
R["fmax"] = np.fmax(r4, 0.5)
R["maximum"] = np.maximum(r4, 0.5)
R["isnan_count"] = np.isnan(r2).sum()
R["isinf_count"] = np.count_nonzero(np.isinf(r1))
R["isfinite"] = np.isfinite(r1 * 0.0)
R["argmax_nan"] = np.argmax(r4)
R["inf_minus_inf"] = r1 - r1

old = np.seterr(all="raise")
try:
    try:
        bad = 1.0 / x
        R["raised"] = "no"
    except FloatingPointError as ex:
        R["raised"] = str(ex)
    try:
        ok = x * 2.0
        R["ok_sum"] = ok.sum()
    except FloatingPointError as ex:
        R["ok_raised"] = str(ex)
finally:
    np.seterr(**old)

big = np.full(N, 1e300)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    R["overflow"] = big * big
    R["f32_overflow"] = np.full(N, 3e38, dtype=np.float32) * np.float32(10)
    R["exp_overflow"] = np.exp(np.linspace(0.0, 1000.0, N))
R["w4"] = runtime_warnings(ws)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
