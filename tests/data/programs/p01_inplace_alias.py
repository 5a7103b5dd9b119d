"""In-place updates through overlapping views (NumPy >= 1.13 copies when operands overlap).

Idiom: the numpy-discussion thread "Array addition inconsistency" (a[1:] += a[:-1]) and the
Stack Overflow question "Difference between a -= b and a = a - b"; a += a.T on a square matrix."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

a = np.arange(N, dtype=np.float64)
a[1:] += a[:-1]
R["shift_add"] = a

b = np.arange(N, dtype=np.int64)
b[:-1] += b[1:]
R["shift_add_fwd"] = b

c = np.linspace(0.0, 1.0, N)
d = np.cos(c)
np.add(c, d, out=c[::-1])
R["out_reversed"] = c

e = np.arange(N, dtype=np.float64) * 0.5
e[::-1] += e
R["reverse_iadd"] = e

m = int(N ** 0.5)
M = np.arange(m * m, dtype=np.float64).reshape(m, m)
M += M.T
R["sym"] = M

S = np.arange(m * m, dtype=np.float64).reshape(m, m) % 7
S[:, 1:] -= S[:, :-1]
R["col_diff"] = S

f = np.arange(N, dtype=np.float64)
np.multiply(f[: 2 * (N // 2): 2], 3.0, out=f[1::2])
R["strided_out"] = f

g = np.sin(np.arange(N, dtype=np.float64))
g[2:] = g[:-2] * 0.5 + g[2:]
g[1:] = g[:-1]
R["shift_copy"] = g

h = np.ones(N)
h2 = h[1:]
h2 *= 2
h[:-1] -= h2
R["h"] = h

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
