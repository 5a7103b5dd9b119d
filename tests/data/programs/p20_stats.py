"""Everyday statistics: covariance and correlation by hand versus np.cov/np.corrcoef,
weighted averages, standardisation, outlier removal by z-score, group means by bincount.

Idioms: "(X - X.mean(0)).T @ (X - X.mean(0)) / (n - 1)"; "X[np.abs(z) < 3]" outlier
filter; group means "np.bincount(g, weights=v) / np.bincount(g)"."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
rows = max(N // 5, 10)

t = np.arange(rows * 5, dtype=np.float64).reshape(rows, 5)
X = np.sin(t * np.array([0.1, 0.2, 0.3, 0.05, 0.7])) + np.cos(t[:, ::-1] * 0.01)
Xc = X - X.mean(axis=0)
cov = Xc.T @ Xc / (rows - 1)
R["cov_hand"] = cov
R["cov_np"] = np.cov(X, rowvar=False)
sd = np.sqrt(np.diag(cov))
R["corr_hand"] = cov / np.outer(sd, sd)
R["corrcoef"] = np.corrcoef(X.T)
z = (X - X.mean(0)) / X.std(0, ddof=1)
R["z"] = z
keep = (np.abs(z) < 1.5).all(axis=1)
R["kept"] = X[keep]
R["kept_n"] = keep.sum()
g = (np.arange(rows) * 31) % 7
v = X[:, 0]
R["group_means"] = np.bincount(g, weights=v) / np.bincount(g)
R["wavg"] = np.average(X, axis=0, weights=np.linspace(1, 2, rows))
R["median0"] = np.median(X, axis=0)
R["quantile"] = np.quantile(X[:, 1], [0.1, 0.9])
R["skew"] = ((Xc / X.std(0)) ** 3).mean(axis=0)
R["mad"] = np.median(np.abs(X - np.median(X, axis=0)), axis=0)
R["rank_corr_sorted"] = np.argsort(np.argsort(X[:, 0]))[:10]
R["cumulative_mean"] = np.cumsum(v) / np.arange(1, rows + 1)
R["ema"] = None
alpha = 0.1
ema = np.empty_like(v)
ema[0] = v[0]
for i in range(1, min(200, rows)):
    ema[i] = alpha * v[i] + (1 - alpha) * ema[i - 1]
R["ema"] = ema[:min(200, rows)]
R["minmax_scale"] = (X - X.min(0)) / np.ptp(X, axis=0)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
