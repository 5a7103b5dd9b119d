"""Exceptions raised mid-loop and caught; state after a failed in-place operation.

Idioms: a retry loop around np.linalg.inv catching LinAlgError for singular matrices; a
loop that stops on a shape mismatch; np.errstate(all='raise') inside try/except in an
iterative solver; IndexError from an out-of-range index caught and logged."""
import os
import sys
import pickle

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

x = np.linspace(1.0, 2.0, N)
log = []
for k in range(6):
    try:
        x += 1.0
        if k == 2:
            x[:10] += np.ones(11)
        x *= 1.5
        if k == 4:
            raise RuntimeError("stop at 4")
    except ValueError as ex:
        log.append(("value", k, str(ex)))
    except RuntimeError as ex:
        log.append(("runtime", k, str(ex)))
R["x"] = x
R["log"] = log

mats = []
for k in range(4):
    m = np.eye(3) * k
    m[0, 1] = 1.0
    mats.append(m)
invs = []
for m in mats:
    try:
        invs.append(np.linalg.inv(m))
    except np.linalg.LinAlgError as ex:
        invs.append(str(ex))
R["invs"] = invs

y = np.linspace(-1, 1, N)
z = np.zeros(N)
steps = 0
try:
    with np.errstate(all="raise"):
        for k in range(5):
            z += y * k
            steps += 1
            if k == 3:
                z = z / (y * 0)
except FloatingPointError as ex:
    R["fpe"] = str(ex)
R["steps"] = steps
R["z"] = z

w = np.arange(N, dtype=np.float64)
try:
    for i in [0, 5, N + 3, 7]:
        w[i] = -w[i] - 1
except IndexError as ex:
    R["index_err"] = str(ex)
R["w"] = w

acc = np.zeros(N)
errs = 0
for k in range(4):
    try:
        part = np.sqrt(y + 0.5 * k) if k != 1 else y.reshape(7, -1)
        acc += part
    except ValueError:
        errs += 1
R["acc"] = acc
R["errs"] = errs


def risky(a, k):
    a *= 2
    if k % 2:
        raise KeyError(k)
    return a.sum()


v = np.ones(N)
got = []
for k in range(4):
    try:
        got.append(risky(v, k))
    except KeyError as ex:
        got.append(repr(ex))
    finally:
        v -= 0.5
R["got"] = got
R["v"] = v
try:
    bad = np.ones(N).reshape(3, -1)
except ValueError as ex:
    R["reshape_err"] = str(ex)

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
