"""What a script reads about itself, threads running NumPy concurrently, and NumPy's errors
caught with try/except.

Idioms: "if __name__ == '__main__':" guards, sys.argv parsing, paths from __file__;
threadpoolctl limiting BLAS threads around a matmul; np.show_config() printed to a log;
worker threads each computing on their own arrays and a queue collecting results; shape
errors (ValueError), out-of-range indices (IndexError), np.AxisError from a bad axis,
TypeError from a bad casting, all caught and recorded with their messages."""
import os
import sys
import io
import pickle
import queue
import threading
import contextlib

import numpy as np

N = int(os.environ.get("FF_PROG_N", "60000"))
R = {}

R["name"] = __name__
R["file_base"] = os.path.basename(__file__)
R["argv_len"] = len(sys.argv) >= 1
R["np_version"] = np.__version__ == np.version.version
R["np_has"] = [hasattr(np, k) for k in ("float64", "ndarray", "linalg", "random", "fft", "newaxis", "errstate")]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    np.show_config()
R["show_config_nonempty"] = len(buf.getvalue()) > 0
try:
    from threadpoolctl import threadpool_limits
    n = max(int(N ** 0.5), 8)
    A = np.cos(np.arange(n * n, dtype=np.float64).reshape(n, n))
    with threadpool_limits(limits=1):
        P1 = A @ A.T + 1
    P2 = A @ A.T + 1
    R["tp_equal"] = np.allclose(P1, P2)
    R["tp_P"] = P1.sum(axis=0)
except ImportError:
    R["tp_equal"] = True
q = queue.Queue()
x = np.linspace(0, 1, N)


def worker(k):
    y = np.sin(x * (k + 1)) ** 2
    y += k
    q.put((k, float(y.sum()), y[:5].copy()))


ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
res = sorted([q.get() for _ in range(4)], key=lambda r: r[0])
R["threads"] = [(k, round(s, 6), y) for k, s, y in res]
state = np.zeros(N)
ev = threading.Event()


def producer():
    state[:] = np.arange(N) * 2.0
    ev.set()


th = threading.Thread(target=producer)
th.start()
ev.wait()
R["after_event"] = state[:5] + 1
th.join()
errors = []
M = np.arange(12.0).reshape(3, 4)
for f in (lambda: M + np.ones(3), lambda: M @ np.ones(3), lambda: M.reshape(5, 2),
          lambda: M[3, 0], lambda: M[:, 4], lambda: M.sum(axis=2), lambda: np.concatenate([M, np.ones(3)]),
          lambda: np.zeros(3, dtype=np.int64).__iadd__(np.ones(3) * 0.5), lambda: M.astype("nope"),
          lambda: np.array([1, 2]) < "a", lambda: np.linalg.inv(M), lambda: M.T.reshape(-1, 5),
          lambda: np.stack([M, M[:2]]), lambda: np.dot(M, M), lambda: M.swapaxes(0, 2),
          lambda: np.ones(3)[[0, 5]], lambda: np.arange(-1), lambda: np.empty(-1),
          lambda: np.broadcast_to(M, (2, 4)), lambda: M.transpose(0, 0), lambda: np.split(M, 3, axis=1),
          lambda: M[np.array([True, False])], lambda: M.item(20), lambda: np.take(M, 50),
          lambda: np.add(M, M, out=np.zeros(3)), lambda: np.squeeze(M, axis=0),
          lambda: np.repeat(M, [1, 2]), lambda: M.mean(axis=(0, 0))):
    try:
        r = f()
        errors.append(("ok", np.shape(r)))
    except Exception as ex:
        errors.append((type(ex).__name__, str(ex)))
R["errors"] = errors
R["M_after"] = M
total = 0.0
for k in range(5):
    try:
        chunk = M[k]
    except IndexError:
        break
    total += chunk.sum()
R["loop_total"] = (total, k)
try:
    with np.errstate(all="raise"):
        np.ones(3) / np.zeros(3)
except FloatingPointError as ex:
    R["fpe"] = str(ex)
try:
    raise np.exceptions.AxisError(3, 2)
except np.exceptions.AxisError as ex:
    R["axiserr"] = str(ex)
R["exc_classes"] = [issubclass(np.exceptions.AxisError, ValueError), issubclass(np.exceptions.AxisError, IndexError), np.linalg.LinAlgError.__name__]

if __name__ == "__main__" and len(sys.argv) > 1:
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(R, fh)
