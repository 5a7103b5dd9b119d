"""One function called with different shapes, dtypes and layouts across calls.

Idioms: a softmax over the last axis with keepdims (numerically stable: subtract the
max), a min-max normaliser, a sigmoid applied to vectors, matrices and float32 batches."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def minmax(x):
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


base = np.sin(np.arange(N, dtype=np.float64))
shapes = [(N,), (N // 4, 4) if N % 4 == 0 else (N,), (N // 10, 10) if N % 10 == 0 else (N,), (1, N)]
for k, shp in enumerate(shapes):
    v = base.reshape(shp)
    R[f"softmax{k}"] = softmax(v)
    R[f"softmax_ax0_{k}"] = softmax(v, axis=0)
    R[f"minmax{k}"] = minmax(v)
    R[f"sigmoid{k}"] = sigmoid(v * 3)
R["softmax_T"] = softmax(base[: (N // 4) * 4].reshape(-1, 4).T)
R["softmax_f32"] = softmax(base.astype(np.float32) * 10)
R["sigmoid_int"] = sigmoid(np.arange(-5, 5))
R["minmax_int"] = minmax(np.arange(N) % 17)
R["softmax_strided"] = softmax(base[::3])
R["softmax_small"] = softmax(base[:3])
R["softmax_1"] = softmax(base[:1])
R["minmax_const"] = None
import warnings
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    R["minmax_const"] = minmax(np.ones(N))
R["w"] = sorted({str(w.message) for w in ws if issubclass(w.category, RuntimeWarning)})


def scale_inplace(x, s):
    x *= s
    x += 1
    return x


for k, shp in enumerate(shapes[:3]):
    buf = base.copy().reshape(shp)
    R[f"scale{k}"] = scale_inplace(buf, 0.5 + k)
R["scale_view"] = scale_inplace(base.copy()[::2], 3.0)
R["scale_int"] = scale_inplace(np.arange(N), 2)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
