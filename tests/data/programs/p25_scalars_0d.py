"""0-d arrays and NumPy scalars flowing through arithmetic, indexing, containers and Python.

Idioms: "total = a.sum(); total += 1" (a scalar, not in place on anything); "np.array(3.0)"
0-d arrays updated in place with "z[...] = " and "z += 1"; "a[()]"; "x.item()"; scalars as
dict keys and list indices; "isinstance(v, np.floating)"; np.float64 behaving as a Python float;
"if a.any():" truthiness; int(a) of a 1-element array."""
import os
import sys
import pickle
import math

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

a = np.linspace(0.0, 1.0, N)
s = a.sum()
t = s
s += 1
R["s_t"] = (s, t)
z = np.array(3.0)
z2 = z
z += 1
z[...] = z * 2
R["z0d"] = (z, z2, z.shape, z.ndim)
R["z_item"] = (z.item(), type(z.item()).__name__, float(z), z[()], type(z[()]).__name__)
w = np.zeros(())
w[()] = a.max()
R["w0d"] = w
k = np.argmax(a)
R["argmax_index"] = a[k]
R["int_idx_list"] = [10, 20, 30, 40][np.int64(2)]
R["dict_key"] = {np.int64(3): "x"}[3]
R["hash_eq"] = hash(np.float64(0.5)) == hash(0.5)
i = (a > 0.5).sum()
R["range_np"] = list(range(i - 3, i))
R["math"] = (math.sqrt(a.mean()), math.floor(a[7] * 10), math.isclose(a.sum(), s - 1))
R["truth"] = (bool(a.any()), bool((a > 2).any()))
try:
    if a > 0.5:
        pass
except ValueError as ex:
    R["ambiguous"] = str(ex)
for key, f in (("one_elem_int", lambda: int(a[3:4] * 10)), ("one_elem_float", lambda: float(np.array([[2.5]])))):
    try:
        R[key] = f()
    except TypeError as ex:
        R[key] = str(ex)
try:
    float(a[:2])
except TypeError as ex:
    R["float_err"] = str(ex)
R["scalar_ops"] = (np.float32(1.5) * 2, np.float32(1.5) * 2.0, np.int8(3) * 2, np.uint8(200) + 100 if False else None)
R["scalar_index_type"] = [type(a[3]).__name__, type(np.arange(5)[2]).__name__, type((a > 0)[2]).__name__, type(a.reshape(2, -1)[1, 2]).__name__]
R["neg_0d"] = -np.float64(2.0)
R["repr_scalar"] = [repr(np.float32(0.1)), str(a[5]), repr(a[5]), f"{a[5]}", f"{a.sum():.4e}", repr(np.int64(7)), repr((a > 0).any()), repr(a.argmax())]
R["scalar_in_array"] = np.array([a.sum(), a.max(), 1])
R["list_of_scalars"] = np.array([a[i] for i in range(5)])
acc = 0
for v in a[:50]:
    acc += v
R["python_loop_acc"] = (acc, type(acc).__name__)
acc2 = np.float32(0)
for v in np.arange(10, dtype=np.float32):
    acc2 = acc2 + v * 0.1
R["f32_loop"] = (acc2, type(acc2).__name__)
m = a.reshape(2, -1)[0]
R["row_is_view"] = (m.base is not None, np.shares_memory(m, a))
R["0d_compare"] = bool(np.array(1.0) == 1.0)
R["len0d"] = None
try:
    len(np.array(1.0))
except TypeError as ex:
    R["len0d"] = str(ex)
R["iter0d"] = None
try:
    iter(np.array(1.0))
except TypeError as ex:
    R["iter0d"] = str(ex)
R["squeeze"] = np.array([[5.0]]).squeeze()
R["shape_ops"] = (np.ones((2, 1)) * np.float64(3)).shape

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
