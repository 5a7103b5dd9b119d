"""Copying, pickling and printing arrays mid-computation.

Idioms: a model's parameters deep-copied as a checkpoint before an in-place update
(copy.deepcopy of a dict of arrays); pickle round trips of views and of 0-d results;
progress lines printed with f-strings and np.array2string; np.set_printoptions(precision=3,
suppress=True) and the np.printoptions context manager; str/repr of float32, int, bool,
complex and empty arrays."""
import os
import sys
import copy
import pickle
import io

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

w = np.linspace(-1, 1, N)
params = {"w": w * 2, "b": np.zeros(3), "hist": [w[:3] + 1]}
ckpt = copy.deepcopy(params)
shallow = copy.copy(params)
params["w"] -= 0.5
params["b"] += 1
params["hist"][0] *= 10
R["ckpt"] = ckpt
R["params"] = params
R["shallow_w_same"] = shallow["w"] is params["w"]
v = w[::2]
cv = copy.copy(v)
dv = copy.deepcopy(v)
w *= 3
R["copies"] = (cv, dv, v)
pair = [w, w[1:4]]
pp = pickle.loads(pickle.dumps(pair))
pp[0][1] = 99.0
R["pickle_pair"] = pp
R["pickle_views_shared"] = bool(np.shares_memory(pp[0], pp[1]))
R["pickle_0d"] = pickle.loads(pickle.dumps((w + 2).sum()))
R["pickle_bool"] = pickle.loads(pickle.dumps((w > 0).any()))
R["deepcopy_memo"] = (lambda d: d[0] is d[1])(copy.deepcopy([w, w]))
buf = io.StringIO()
x = np.sin(np.arange(N) * 0.5) * 1000
print(x[:4], file=buf)
print(repr(x[:3] / 7), file=buf)
print(f"{x.mean():.3f} {x.max():8.2f} {x.argmax():d} {np.float32(x[1]):e}", file=buf)
print(np.array2string(x[:5], precision=2, separator=","), file=buf)
np.set_printoptions(precision=3, suppress=True)
print(x[:4] / 1e6, file=buf)
print(repr(np.arange(3) * 0.1), file=buf)
with np.printoptions(precision=1, threshold=5, edgeitems=2):
    print(x, file=buf)
    print(repr(x.reshape(2, -1)), file=buf)
print(x[:3], file=buf)
np.set_printoptions(precision=8, suppress=False)
print(str(x[:2]), file=buf)
print((x > 0)[:5], (x[:3] * 1j + 1), np.arange(4, dtype=np.uint8) * 2, np.zeros((0, 3)), sep="|", file=buf)
print(x.astype(np.float32)[:3], np.arange(3).reshape(3, 1) + 1, file=buf)
print(np.float64(x[2]), x[2], x.sum() > 0, file=buf)
print("{} {!r} {:>10.4f}".format(x[0], x[1], x[2]), file=buf)
print("%.3f %d %s" % (x[0], x.argmin(), x[:2]), file=buf)
R["printed"] = buf.getvalue()
R["get_printoptions"] = np.get_printoptions()["precision"]
R["tolist_nested"] = (x[:4].reshape(2, 2) // 1).tolist()
R["format_array"] = format(x[:2])
try:
    format(x[:2], ".2f")
except TypeError as ex:
    R["format_err"] = str(ex)
R["format_0d"] = format(np.array(2.5), ".2f")

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
