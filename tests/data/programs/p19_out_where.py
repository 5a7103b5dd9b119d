"""ufuncs with out= and where=, and in-place math functions.

Idioms: the safe division "np.divide(a, b, out=np.zeros_like(a), where=b != 0)" (Stack Overflow
"How to return 0 with divide by zero"); np.sqrt(x, out=x); np.maximum(a, 0, out=a) for ReLU;
np.clip(a, 0, 1, out=a); np.add(a, b, out=a); out= aliasing a reversed input."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

a = np.arange(N, dtype=np.float64) % 10
b = (np.arange(N) % 4).astype(np.float64)
R["safe_div"] = np.divide(a, b, out=np.zeros_like(a), where=b != 0)
q = np.full(N, -1.0)
np.divide(a, b, out=q, where=b != 0)
R["safe_div_prefilled"] = q
x = np.abs(np.sin(np.arange(N, dtype=np.float64)))
np.sqrt(x, out=x)
R["sqrt_out"] = x
r = np.cos(np.arange(N) * 0.3)
np.maximum(r, 0, out=r)
R["relu_out"] = r
c = np.linspace(-1, 2, N)
np.clip(c, 0, 1, out=c)
R["clip_out"] = c
d = np.arange(N, dtype=np.float64)
np.add(d, d[::-1], out=d)
R["add_rev_out"] = d
e = np.arange(N, dtype=np.float64)
np.subtract(e[1:], e[:-1], out=e[:-1])
R["sub_shift_out"] = e
f = np.ones(N)
np.multiply(f, 2, out=f, where=np.arange(N) % 2 == 0)
R["where_inplace"] = f
g = np.empty(N, dtype=np.float32)
np.multiply(a, 0.5, out=g, casting="same_kind")
R["out_f32"] = g
try:
    h = np.zeros(N, dtype=np.int64)
    np.multiply(a, 0.5, out=h)
except Exception as ex:
    R["cast_err"] = type(ex).__name__
k = np.zeros(N)
res = np.exp(a * 0.1, out=k)
R["out_is"] = res is k
R["k"] = k
m2 = np.zeros((3, N))
np.add(a, b, out=m2[1])
np.negative(a, out=m2[2])
R["m2"] = m2
t = np.arange(N, dtype=np.float64)
np.add(t, 1, out=t[::-1])
R["rev_out"] = t
s = np.zeros(N)
np.sum(np.ones((4, N)), axis=0, out=s)
R["sum_out"] = s
z = np.arange(N, dtype=np.float64)
np.floor_divide(z, 3, out=z)
np.remainder(z, 5, out=z)
R["fdiv_out"] = z
u = np.zeros(N, dtype=bool)
np.greater(a, 4, out=u)
np.logical_and(u, b > 1, out=u)
R["bool_out"] = u
tup = np.modf(a * 1.25)
R["modf"] = tup
R["divmod"] = np.divmod(np.arange(N) - 7, 3)
R["frexp"] = np.frexp(a + 0.5)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
