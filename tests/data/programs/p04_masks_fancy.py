"""np.where, boolean masks and fancy-index writes.

Idioms: "x[x < 0] = 0" thresholding; a[idx] += 1 with repeated indices versus np.add.at
(Stack Overflow "numpy fancy indexing increment repeated indices"); np.putmask; the
Mandelbrot mask update Z[m] = Z[m]**2 + C[m]."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

x = np.sin(np.arange(N) * 0.37)
y = x.copy()
y[y < 0] = 0
R["relu"] = y
R["where3"] = np.where(x > 0.5, x, -x)
R["where_scalar"] = np.where(x > 0, 1, 0)
R["where_mixed"] = np.where(x > 0, 1, 0.5)
R["where_idx"] = np.where(x > 0.99)[0]

z = x.copy()
m = z > 0.2
z[m] *= 2.0
z[~m] -= 1.0
R["mask_inplace"] = z

idx = np.arange(N) % 17
cnt = np.zeros(17, dtype=np.int64)
cnt[idx] += 1
R["fancy_repeat"] = cnt
cnt2 = np.zeros(17, dtype=np.int64)
np.add.at(cnt2, idx, 1)
R["add_at"] = cnt2

w = np.arange(N, dtype=np.float64)
w[[0, 2, 4]] = [-1.0, -2.0, -3.0]
w[np.array([N - 1, N - 2])] += 10
R["fancy_set"] = w

v = np.arange(N, dtype=np.float64)
np.putmask(v, v % 3 == 0, -v)
R["putmask"] = v

nx = int(N ** 0.5)
C = np.linspace(-2, 1, nx)[None, :] + 1j * np.linspace(-1.5, 1.5, nx)[:, None]
Zc = np.zeros_like(C)
it = np.zeros(C.shape, dtype=int)
for k in range(12):
    live = np.abs(Zc) < 2
    it[live] = k
    Zc[live] = Zc[live] ** 2 + C[live]
R["mandel_it"] = it
R["mandel_live"] = np.abs(Zc) < 2

A = np.arange(nx * nx, dtype=np.float64).reshape(nx, nx)
rows = A[A[:, 0] % 2 == 0]
R["row_mask"] = rows
A[A[:, 0] % 3 == 0, :] = 0.0
R["row_mask_set"] = A
R["nonzero"] = np.nonzero(A[:, 1])[0]
R["argwhere_n"] = np.argwhere(A > nx * nx - 10)
R["take"] = np.take(x, [3, 1, 2])
R["sel_sum"] = x[x > 0].sum()
R["sel_len"] = len(x[x > 0])

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
