"""The pending-op limit's flush ends where the recording's structure repeats
(:func:`flamefuse.lazy.recorder.aligned_cut`): a loop without a sync point flushes whole
bodies from the same place each time, so its flushes are one plan, reused. Before, each flush
took exactly the limit's ops and began elsewhere in the body: a new program (plan, kernels'
first calls, a plan read from disk in a warm run) at every flush."""
import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.lazy import recorder
from flamefuse.runtime import execute


def _stencil(np, p, b, steps):
    """cavity_flow's pressure iteration: a copy, a stencil, four boundary rows (8 ops a body)."""
    for _ in range(steps):
        pn = p.copy()
        p[1:-1, 1:-1] = ((pn[1:-1, 2:] + pn[1:-1, :-2]) * 0.25 + (pn[2:, 1:-1] + pn[:-2, 1:-1]) * 0.25
                         - 0.1 * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0.0
    return p


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")           # plans and results, not kernel speed
    monkeypatch.setattr(lazy.RECORDER, "max_ops", 100)
    monkeypatch.setattr(lazy.RECORDER, "eager_below", 0)
    monkeypatch.setattr(execute, "_PLANS", {})
    lazy.flush()


def test_a_loop_without_sync_points_flushes_one_program_again_and_again(small_limit):
    rng = numpy.random.default_rng(3)
    P, B = rng.random((30, 30)), rng.random((30, 30))
    want = _stencil(numpy, P.copy(), B, 90)
    built, hits, flushes = (execute.STATS["plans_built"], execute.STATS["plan_hits"],
                            recorder.STATS["flushes"])
    got = numpy.asarray(_stencil(lazy, lazy.array(P) * 1.0, lazy.asarray(B), 90))
    numpy.testing.assert_array_equal(got, want)
    flushed = recorder.STATS["flushes"] - flushes
    assert flushed >= 8
    # the first flush (from the start), the repeating one, the last (the rest): 3 plans
    assert execute.STATS["plans_built"] - built <= 3
    assert execute.STATS["plan_hits"] - hits >= flushed - 3


def test_no_repeat_flushes_every_pending_op():
    ops = [recorder.Recorded("ew", f"op{k}", (None, k), (), (4,), ("float64",) * 2, None)
           for k in range(40)]
    assert recorder.aligned_cut(ops, 20) is None
    body = ops[:7]
    loop = [*ops[30:33], *body * 6]          # 3 ops before the loop, a 7-op body 6 times
    assert recorder.aligned_cut(loop, 20) is None             # its start never comes again
    assert recorder.aligned_cut(body * 6, 20) == 28      # (the window of 10 ops must follow it)
    assert recorder.aligned_cut(body * 6, 29) is None
