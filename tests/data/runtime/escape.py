"""Values leaving the lazy world (issue 26): the same output under python and flamefuse fuse."""
import copy
import json
import pickle
import warnings

import numpy as np

warnings.simplefilter("ignore")
n = 100_000
x = np.arange(float(n))
y = pickle.loads(pickle.dumps(x * 9))
print("pickle", type(y).__name__, y[:3].tolist(), float(y.sum()))
z = copy.deepcopy(x * 10)
x += 1
print("deepcopy", float(z.sum()), float(x.sum()))
a = np.arange(float(n)) * 1.0
rng = np.random.default_rng(7)
rng.shuffle(a)
np.random.seed(3)
np.random.shuffle(a)
print("shuffle", len(set(np.asarray(a).tolist())), a[:4].tolist())
c = np.arange(float(n)) * 2
c.setflags(write=False)
for label, act in (("setitem", lambda: c.__setitem__(0, 99)), ("iadd", lambda: c.__iadd__(1))):
    try:
        act()
        print(label, "no error")
    except ValueError as err:
        print(label, "ValueError", err)
b = np.broadcast_to(np.arange(5.0), (3, 5))
try:
    b[0, 0] = 1
except ValueError as err:
    print("broadcast_to", err)
h = (np.arange(n) % 50).astype(np.float16)
print("float16", repr((h * np.float16(2)).sum()), (h + h).dtype)
t = (np.arange(n) % 7).astype("timedelta64[s]")
print("timedelta", repr(t.sum()), repr(t[:3] * 2))
s = (x * 0.5).sum()
print("scalar", repr(s), round(s), json.dumps(s), {s: 1}[float(s)], s == float(s))
print("repr", repr(x[:4] * 2))
import scipy.stats
print("scipy", scipy.stats.norm.rvs(size=3, random_state=np.random.default_rng(1)).tolist())
e = x[5]
x[5] = -1.0
print("element", repr(e), float(x[5]))
