"""Writes: np.copyto with where= and casting, np.put/np.place/np.put_along_axis, fancy
assignment with repeated indices, reversed self-assignment, views of views written after
a read, 2-D boolean/integer index writes.

Idioms: "np.copyto(dst, src, where=mask)" to merge images; "a[idx] = vals" where idx repeats
(last write wins) versus "a[idx] += 1" (one increment); "a[::-1] = a" (NumPy copies first);
"np.put(a, ind, v, mode='wrap')"; "np.place(a, a < 0, [0, 1])" cycling values; top-k
zeroing with np.put_along_axis."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}


def err(f):
    try:
        f()
    except Exception as ex:
        return (type(ex).__name__, str(ex))
    return None


x = np.cos(np.arange(N) * 0.3)
dst = np.zeros(N)
np.copyto(dst, x, where=x > 0)
R["copyto_where"] = dst
di = np.zeros(N, dtype=np.int32)
R["copyto_cast_err"] = err(lambda: np.copyto(di, x))
np.copyto(di, x * 10, casting="unsafe")
R["copyto_unsafe"] = di
d2 = np.ones((3, N))
np.copyto(d2, x)
R["copyto_bcast"] = d2
d3 = x * 2
np.copyto(d3[1:], d3[:-1])
R["copyto_overlap"] = d3
a = np.arange(N, dtype=np.float64)
a[::-1] = a
R["rev_assign"] = a
b = np.arange(N, dtype=np.float64)
b[1:] = b[:-1]
b[:-1] = b[1:] * 2
R["shift_assign"] = b
c = np.arange(N, dtype=np.float64)
v1 = c[2:]
v2 = v1[::2]
s_before = c.sum()
v2[:] = -1
R["view_of_view"] = c
R["sum_before"] = s_before
R["v1_after"] = v1[:6].copy()
m = np.arange(20.0)
mv = m.reshape(4, 5)
t = mv.T
total = t.sum()
t[1] += 100
R["T_write"] = m
R["T_total"] = total
rep = np.zeros(10)
rep[[1, 1, 3, 3, 3]] = [5, 6, 7, 8, 9]
R["fancy_rep_set"] = rep
inc = np.zeros(10)
inc[[1, 1, 3, 3, 3]] += 1
R["fancy_rep_inc"] = inc
inc2 = np.zeros(10)
inc2[np.array([2, 2, 2])] -= np.array([1.0, 2.0, 3.0])
R["fancy_rep_isub"] = inc2
p = np.arange(N, dtype=np.float64)
np.put(p, [0, 3, N + 1], [-1, -2, -3], mode="wrap")
R["put_wrap"] = p
p2 = np.arange(10)
np.put(p2, [-1, 22], [7, 8], mode="clip")
R["put_clip"] = p2
R["put_raise"] = err(lambda: np.put(np.arange(5), [7], [1]))
q = np.sin(np.arange(N))
np.place(q, q < 0, [10, 20, 30])
R["place"] = q
G = (np.arange(N * 4, dtype=np.float64).reshape(N, 4) * 7) % 11
top = np.argsort(G, axis=1)[:, :2]
np.put_along_axis(G, top, 0.0, axis=1)
R["put_along"] = G
R["take_along"] = np.take_along_axis(G, top, axis=1)
H = np.arange(24).reshape(4, 6)
H[[0, 2], 1:3] = -1
H[H > 20] = 0
H[1, [True, False, True, False, True, False]] = 9
H[:, [5, 5]] = np.array([[1, 2]] * 4)
R["mixed_fancy"] = H
R["fancy_shape_err"] = err(lambda: H.__setitem__([0, 1], np.ones(5)))
R["index_err"] = err(lambda: H[4])
R["bool_len_err"] = err(lambda: H[np.ones(3, bool)])
R["float_index_err"] = err(lambda: H[1.0])
R["too_many_err"] = err(lambda: H[1, 2, 3])
K = np.zeros((3, 4))
K[...] = np.arange(4)
K[1] = 7
K[:, 0] = [1, 2, 3]
K[K == 7] = np.arange(3.0)
R["K"] = K
f = np.zeros(6)
f.fill(2.5)
f[:] = 3
R["fill"] = f
w = np.arange(12.0)
w.reshape(3, 4)[:, 1] = 0
w[w.argmax()] = -w.max()
R["reshape_view_write"] = w
z = np.arange(N, dtype=np.float64)
zz = z[:]
z += 1
zz *= 2
R["alias_slices"] = z
y = np.arange(N, dtype=np.int64)
y[y % 3 == 0] += y[y % 3 == 0] // 3
R["mask_rhs_same"] = y
idx = np.array([3, 1, 3])
src = np.arange(N, dtype=np.float64)
src[idx] = src[idx[::-1]] * 10
R["fancy_self"] = src

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
