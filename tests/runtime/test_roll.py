"""``np.roll`` fused: a wrapped read in the consuming kernel, NumPy's result exactly."""
import re

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy
from flamefuse.lazy.recorder import RECORDER
from flamefuse.runtime import execute
from flamefuse.runtime.kernel import Grid
from flamefuse.runtime.views import contiguous, make_view, overlap, plain, rolled

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
DTYPES = ["float64", "float32", "int8", "int64", "uint8", "bool"]


def _new_plans(before):
    return [plan for key, plan in execute._PLANS.items() if key not in before]


def _grids(step):
    return [a for a in step.args if type(a) is Grid]


def _avg(np, a):
    return 0.25 * (np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1))


def _life_step(np, board):
    neighbours = sum(np.roll(np.roll(board, dy, axis=0), dx, axis=1)
                     for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    return ((neighbours == 3) | ((board == 1) & (neighbours == 2))).astype(numpy.int8)


# -- views -------------------------------------------------------------------------------------

def test_a_wrap_changes_equality_but_not_overlap():
    v = contiguous((4, 5))
    r = rolled(v, 0, 1)
    assert r != v and plain(r) == v and r.wrap == (3, 0)
    assert overlap(r, v) and overlap(r, make_view(7, (1,), (1,)))
    assert not overlap(rolled(make_view(0, (2, 5), (5, 1)), 1, 2), make_view(10, (2, 5), (5, 1)))


def test_rolls_compose_and_normalise():
    v = contiguous((4, 5))
    assert rolled(rolled(v, 0, 1), 0, -1) == v                     # back to no wrap at all
    assert rolled(rolled(v, 0, 1), 1, 7).wrap == (3, 3)
    assert rolled(v, 0, 8) == v                                     # a whole turn
    assert make_view(0, (1, 5), (5, 1), (3, 2)).wrap == (0, 2)      # extent 1: nothing wraps
    assert make_view(0, (4, 5), (0, 1), (3, 0)).wrap == ()          # broadcast: nothing wraps


# -- NumPy's results ---------------------------------------------------------------------------

@st.composite
def roll_cases(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    dtype = draw(st.sampled_from(DTYPES))
    form = draw(st.sampled_from(["whole", "slice", "transposed", "step", "computed"]))
    rolls = draw(st.lists(st.tuples(st.integers(-12, 12), st.one_of(st.none(), st.integers(-nd, nd - 1))),
                          min_size=1, max_size=3))
    seed = draw(st.integers(0, 2 ** 16))
    return shape, dtype, form, rolls, seed


def _data(shape, dtype, seed):
    rng = numpy.random.default_rng(seed)
    big = tuple(n + 2 for n in shape)
    x = rng.integers(-50, 50, size=big)
    return (x > 0) if dtype == "bool" else x.astype(dtype)


def _program(np, x, form, rolls, shape):
    if form == "whole":
        a = x[tuple(slice(0, n) for n in shape)].copy()
    elif form == "slice":
        a = x[tuple(slice(1, n + 1) for n in shape)]
    elif form == "transposed":
        a = x.T[tuple(slice(0, n) for n in reversed(shape))]
    elif form == "step":
        a = x[::-1][tuple(slice(0, n) for n in shape)]
    else:
        a = x[tuple(slice(0, n) for n in shape)] + x[tuple(slice(1, n + 1) for n in shape)]
    r = a
    for shift, axis in rolls:
        r = np.roll(r, shift, axis)
    first = np.roll(a, rolls[0][0], rolls[0][1])
    # max, not sum: exact in any order (the reduced axis is the innermost, split loop)
    return r, r + a, first * a, first.max(axis=-1), first.max(axis=0), (r * 3).max()


def test_rolls_match_numpy_exactly(interpreted):
    @SETTINGS
    @given(roll_cases())
    def inner(case):
        shape, dtype, form, rolls, seed = case
        x = _data(shape, dtype, seed)
        want = _program(numpy, x.copy(), form, rolls, shape)
        lx = lazy.asarray(x.copy())
        got = _program(lazy, lx, form, rolls, shape)
        for g, w in zip(got, want):
            g = numpy.asarray(g)
            assert g.dtype == w.dtype and g.shape == w.shape
            numpy.testing.assert_array_equal(g, w)
        numpy.testing.assert_array_equal(numpy.asarray(lx), x)        # the source is untouched
    inner()


def test_roll_shifts_axes_and_sequences_match_numpy(interpreted):
    x = numpy.arange(60.0).reshape(3, 4, 5)
    for shift in (0, 1, -1, 4, 5, -7, 123, -60):
        for axis in (None, 0, 1, 2, -1, (0, 2), (2, 2)):
            s = (shift, shift - 1) if isinstance(axis, tuple) else shift
            numpy.testing.assert_array_equal(numpy.asarray(lazy.roll(lazy.asarray(x), s, axis)),
                                             numpy.roll(x, s, axis))
    with pytest.raises(numpy.exceptions.AxisError):
        lazy.roll(lazy.asarray(x), 1, 3)


def test_a_roll_is_a_copy_even_when_rolls_compose(interpreted):
    x = numpy.arange(30.0).reshape(5, 6)
    a = lazy.asarray(x.copy())
    r = lazy.roll(a, 2, 0)
    a += 100                                      # written after the first roll
    rr = lazy.roll(r, -1, 1)                      # must not read a's new values
    r[0, 0] = -1.0                                # nor does r write through to a
    numpy.testing.assert_array_equal(numpy.asarray(rr), numpy.roll(numpy.roll(x, 2, 0), -1, 1))
    numpy.testing.assert_array_equal(numpy.asarray(a), x + 100)
    assert numpy.asarray(r)[0, 0] == -1.0


def test_rolls_in_place_updates_of_the_source(interpreted):
    """``a[...] = np.roll(a, 1)`` and ``a += np.roll(a, 1, 1)`` read every old value."""
    x = numpy.arange(42.0).reshape(6, 7)
    a = lazy.asarray(x.copy())
    a[...] = lazy.roll(a, 1, 0)
    a += lazy.roll(a, 3, 1)
    a[1:4] = lazy.roll(a[1:4], -2, 0) * 2
    want = numpy.roll(x, 1, 0)
    want += numpy.roll(want, 3, 1)
    want[1:4] = numpy.roll(want[1:4], -2, 0) * 2
    numpy.testing.assert_array_equal(numpy.asarray(a), want)


def test_compiled_rolls_match_numpy():
    """Real Numba kernels: rolls along the inner and outer axes, 1-D (the split loop is the
    chunked outer one), reductions over a rolled axis, every dtype."""
    lazy.configure(eager_below=0)
    try:
        for dtype in DTYPES:
            x = _data((33, 17), dtype, 3)
            for shift, axis in ((1, 1), (-5, 0), (20, 1), (7, None), ((2, -3), (0, 1))):
                want = _program(numpy, x.copy(), "slice", [(shift, axis)], (31, 15))
                got = _program(lazy, lazy.asarray(x.copy()), "slice", [(shift, axis)], (31, 15))
                for g, w in zip(got, want):
                    numpy.testing.assert_array_equal(numpy.asarray(g), w)
            flat = lazy.asarray(x.reshape(-1).copy())
            numpy.testing.assert_array_equal(numpy.asarray(lazy.roll(flat, 100) + flat),
                                             numpy.roll(x.reshape(-1), 100) + x.reshape(-1))
    finally:
        lazy.configure(eager_below=1 << 15)


def test_game_of_life_matches_numpy_and_is_one_kernel_per_generation(interpreted):
    rng = numpy.random.default_rng(7)
    board = (rng.random((12, 9)) < 0.3).astype(numpy.int8)
    want, got = board.copy(), lazy.asarray(board.copy())
    before = set(execute._PLANS)
    for _ in range(5):
        want, got = _life_step(numpy, want), _life_step(lazy, got)
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    plans = _new_plans(before)
    assert len(plans) == 1 and len(plans[0].steps) == 5, [len(p.steps) for p in plans]
    assert all(len(_grids(s)) == 2 for s in plans[0].steps)          # the board in, the board out


def test_rolls_in_a_clustered_stage_match_numpy(interpreted):
    lazy.configure(partitioner="cluster")
    x = numpy.arange(48.0).reshape(6, 8)
    a = lazy.asarray(x.copy())
    got = numpy.asarray(_avg(lazy, a) + lazy.roll(a, 3))
    numpy.testing.assert_array_equal(got, _avg(numpy, x) + numpy.roll(x, 3))


# -- one fused kernel --------------------------------------------------------------------------

def _avg_plan(shape, jit=True):
    x = numpy.random.default_rng(1).standard_normal(shape)
    a = lazy.asarray(x)
    before = set(execute._PLANS)
    got = numpy.asarray(_avg(lazy, a))
    numpy.testing.assert_array_equal(got, _avg(numpy, x))
    plans = _new_plans(before)
    assert len(plans) == 1
    return plans[0], a


def test_shallow_water_average_is_one_kernel_without_temporaries():
    """The four rolls and three additions: one block, one pass reading ``a`` through
    wrapped subscripts and writing the result; no array for any rolled copy."""
    lazy.configure(eager_below=0)
    try:
        plan, a = _avg_plan((300, 200))
    finally:
        lazy.configure(eager_below=1 << 15)
    assert len(plan.steps) == 1
    (step,) = plan.steps
    assert len(_grids(step)) == 2, step.source
    assert len(re.findall(r"^ +w\d+ = i\d", step.source, re.M)) == 4     # four wrapped indices
    assert step.source.count("while c1 < n1") == 1        # the inner loop split where i1 + s wraps
    assert len(plan.gone) == 7                    # 4 rolled copies and 3 partial sums contracted


def test_a_loop_over_shifts_compiles_one_kernel(interpreted):
    x = numpy.arange(35.0).reshape(5, 7)
    a = lazy.asarray(x)
    before = set(execute._PLANS)
    for s in range(1, 5):
        got = numpy.asarray(lazy.roll(a, s, 1) * 2.0 + lazy.roll(a, -s, 0))
        numpy.testing.assert_array_equal(got, numpy.roll(x, s, 1) * 2.0 + numpy.roll(x, -s, 0))
    sources = {s.source for p in _new_plans(before) for s in p.steps}
    assert len(sources) == 1, sources


def test_unobserved_copies_are_not_run(interpreted):
    a = lazy.asarray(numpy.arange(20.0))
    before = set(execute._PLANS)
    b = lazy.roll(lazy.roll(a, 3), 4)             # the inner roll's copy: never read, dropped
    numpy.testing.assert_array_equal(numpy.asarray(b), numpy.roll(numpy.arange(20.0), 7))
    (plan,) = _new_plans(before)
    assert len(plan.steps) == 1 and len(_grids(plan.steps[0])) == 2
    assert not RECORDER.ops
