"""Aliases, .copy(), np.asarray, and views that escape into lists and dicts.

Idioms: the simulation loop that appends the state to a history list without .copy()
(every entry ends up the last state, a frequent Stack Overflow question) next to the one
that copies; rows kept in a dict then the base scaled in place; reshape/ravel views versus
flatten copies; np.asarray returning the same array."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}
n = max(int(N ** 0.5), 4)

state = np.zeros(N)
hist_alias, hist_copy = [], []
for step in range(4):
    state += np.sin(np.arange(N) * 0.01 * (step + 1))
    hist_alias.append(state)
    hist_copy.append(state.copy())
R["hist_alias"] = np.array(hist_alias)
R["hist_copy"] = np.array(hist_copy)
R["hist_stack"] = np.stack(hist_copy)

A = np.arange(n * n, dtype=np.float64).reshape(n, n)
rows = {i: A[i] for i in range(3)}
cols = [A[:, j] for j in range(2)]
A *= 2
A[1] += 100
R["rows"] = [rows[i].copy() for i in range(3)]
R["cols"] = np.vstack(cols)
B = A
B -= 1
R["alias_is"] = B is A
R["A"] = A
C = np.asarray(A)
C[0, 0] = -5
R["asarray_same"] = C is A
R["A00"] = A[0, 0]
flat = A.ravel()
flat[1] = -7
fl2 = A.flatten()
fl2[2] = -9
R["A_after_ravel"] = A[0, :4].copy()
R["flatten"] = fl2[:4]
rv = A.reshape(-1)
rv[:n] = 0.0
R["A_row0"] = A[0]
T = A.T
T[0, 1] = 42.0
R["A10"] = A[1, 0]
Tc = A.T.copy()
Tc[0, 1] = 43.0
R["A10_after_copy"] = A[1, 0]
d = {"w": np.ones(N)}
w = d["w"]
w += 1
d["w"] = d["w"] * 3
R["dict_w"] = d["w"]
R["w_alias"] = w
lst = [np.zeros(n)] * 3
lst[0] += 1
R["list_mult"] = np.array(lst)
x = np.arange(N, dtype=np.float64)
v = x[::2]
x += 1
R["v_after"] = v
v2 = v.copy()
x *= 2
R["v2_after"] = v2
R["base_is"] = (v.base is x)
R["may_share"] = np.may_share_memory(v, x)
R["shares"] = np.shares_memory(v2, x)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
