"""A recorded program run as NumPy's calls (:mod:`flamefuse.runtime.numpy_program`, the path of a
flush whose kernels compile in the background): NumPy's results, and its temporaries live from
their first operation to their last, as NumPy's own do (structural checks, no timings)."""
import numpy as np

from flamefuse.runtime import numpy_program, pool
from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
from flamefuse.runtime.views import View

N = 1 << 16         # above pool.MIN_BYTES for float64


def _chain(steps: int) -> Program:
    """``out = ((x + 1) + 1) ... + 1``, each partial sum a temporary of its own base."""
    flat = View(0, (N,), (1,), ())
    bases = [BaseInfo("float64", N, False, False), BaseInfo("float64", N, True, False)]
    bases += [BaseInfo("float64", N, True, True) for _ in range(steps - 1)]
    loop = ("float64", "float64", "float64")
    ops, src = [], 0
    for k in range(steps):
        dst = 1 if k == steps - 1 else k + 2
        ops.append(Op("ew", "add", Ref(dst, flat), (Ref(src, flat), Scalar(0, "float64")), (N,), loop))
        src = dst
    return Program(tuple(ops), tuple(bases))


def test_a_chain_of_temporaries_reuses_their_memory():
    steps = 40
    program = _chain(steps)
    x = np.linspace(0.0, 1.0, N)
    buffers = [x.copy(), None] + [None] * (steps - 1)
    pool.clear()
    pool.STATS.clear()
    numpy_program.run(program, buffers, [1.0])
    want = x
    for _ in range(steps):
        want = want + 1.0
    assert np.array_equal(buffers[1], want)                   # NumPy's result, bit for bit
    assert all(b is None for b in buffers[2:])                # every temporary handed back
    # one temporary alive at a time: a few buffers, not one per temporary (40 before)
    assert pool.STATS["allocated"] <= 3, pool.STATS
