"""Boolean-mask selection in flamefuse.lazy, run by clustering, agrees with eager NumPy."""
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy
from flamefuse.lazy.selection import Selection
from flamefuse.runtime import filters
from runtime_programs import check as check_plain
from runtime_programs import programs as plain_programs

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "greater", "less_equal"]
UNARY = ["negative", "absolute"]
REDUCE = ["sum", "prod", "min", "max", "mean", "any", "all"]


def _steps():
    idx = st.integers(0, 7)
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(BINARY), idx, idx, st.sampled_from(
            ["sel", "int", "float", "zero_d"])),
        st.tuples(st.just("un"), st.sampled_from(UNARY), idx),
        st.tuples(st.just("red"), st.sampled_from(REDUCE), idx),
        st.tuples(st.just("center"), idx),
        st.tuples(st.just("size"), idx),
        st.tuples(st.just("nested"), idx, st.integers(-2, 2), st.sampled_from(REDUCE)),
        st.tuples(st.just("cast"), idx, st.sampled_from(["float64", "int64", "bool"])),
        st.tuples(st.just("del"), idx),
        st.tuples(st.just("sync"), idx),
        st.tuples(st.just("where"), idx, idx, st.sampled_from(["sel", "int", "float"])),
    )


filter_programs = st.tuples(
    st.sampled_from(["float64", "int64"]),
    st.one_of(st.integers(0, 50), st.just(3000)),
    st.sampled_from(["random", "none", "all", "numpy", "and", "2d"]),
    st.integers(0, 2**31), st.lists(_steps(), min_size=1, max_size=10))


def _mask(mod, how, x, z, rng):
    if how == "none":
        return x > 100
    if how == "all":
        return x > -100
    if how == "numpy":
        return rng.random(x.shape) < 0.5
    if how == "and":
        return (x > 0) & (z < 1)
    return x > 0


def run(mod, spec):
    """Run ``spec`` on ``mod``; returns (selections and results kept, min/max of empty seen)."""
    dtype, n, how, seed, steps = spec
    rng = numpy.random.default_rng(seed)
    shape = (n // 5, 5) if how == "2d" else (n,)
    data = rng.integers(-4, 5, shape) if dtype == "int64" else rng.standard_normal(shape) * 3
    x, z = mod.asarray(data.astype(dtype)), mod.asarray(rng.integers(-3, 4, shape).astype(dtype))
    m = _mask(mod, how, x, z, rng)
    pool, out, failed = [x[m], z[m] * 2], [], False
    for step in steps:
        if not pool:
            break
        try:
            failed |= _apply(mod, step, pool, out)
        except ValueError as err:     # a deferred min/max of an empty selection, at a sync
            if mod is numpy or "zero-size array" not in str(err):
                raise
            failed = True             # the flush finished before raising: run the step again
            failed |= _apply(mod, step, pool, out)
    return pool + out, failed


def _apply(mod, step, pool, out) -> bool:
    """One step of a random program; True when NumPy raised for min/max of nothing."""
    kind, k = step[0], step[2] if step[0] in ("bin", "un", "red") else step[1]
    a = pool[k % len(pool)]
    if kind == "bin":
        b = {"sel": pool[step[3] % len(pool)], "int": 3, "float": -1.5,
             "zero_d": mod.asarray(numpy.float64(1.5)) * 2}[step[4]]
        if not (step[1] == "subtract" and a.dtype == bool and getattr(b, "dtype", 0) == bool):
            pool.append(getattr(mod, step[1])(a, b))
    elif kind == "un" and a.dtype != bool:
        pool.append(getattr(mod, step[1])(a))
    elif kind in ("red", "nested"):
        name = step[1] if kind == "red" else step[3]
        src = a if kind == "red" else a[a > step[2]]
        if name == "prod" and a.dtype.kind == "f":
            return False
        try:
            out.append(getattr(src, name)())
        except ValueError:
            out.append(None)
            return True
    elif kind == "center":
        pool.append(a - a.mean())
    elif kind == "size":
        out.append(a.size)
    elif kind == "cast":
        pool.append(a.astype(step[2]))
    elif kind == "del":
        del pool[k % len(pool)]
    elif kind == "where":
        b = {"sel": pool[step[2] % len(pool)], "int": 2, "float": 0.5}[step[3]]
        pool.append(mod.where(a > 0, a, b))
    elif kind == "sync":
        out.append(numpy.asarray(a).copy())
    return False


def check(spec, bitwise=False):
    """The program ``spec`` under flamefuse.lazy against NumPy: the same errors, floats within
    1e-9 (``bitwise``: the same bits, a NaN for a NaN), other values equal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected, failed = run(numpy, spec)
        got, raised = run(lazy, spec)
        try:
            lazy.flush()
        except ValueError as err:
            raised = "zero-size array" in str(err)
        assert raised == failed
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            if e is None:
                continue
            g, e = numpy.asarray(g), numpy.asarray(e)
            assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
            if bitwise:
                assert numpy.array_equal(g, e, equal_nan=True), (g, e)
            elif e.dtype.kind == "f":
                numpy.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9)
            else:
                numpy.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("partitioner,piece", [("greedy", None), ("cluster", None), ("greedy", 3)])
def test_random_filter_programs_match_numpy(interpreted, partitioner, piece, monkeypatch):
    """(``piece``: stages cut into pieces of about that many ops, recorder.SEGMENT_MAX.)"""
    if piece is not None:
        from flamefuse.lazy import recorder
        monkeypatch.setattr(recorder, "SEGMENT_MAX", piece)
    lazy.configure(partitioner=partitioner)
    filters.STATS.clear()

    @SETTINGS
    @given(filter_programs)
    def inner(spec):
        lazy.reset_stats()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            check(spec)
        # only reductions of computed, empty selections fall back (as LazyArray ones do)
        assert all(name.endswith("(this form)") for name in lazy.stats()["fallback_names"])
    inner()
    assert filters.STATS["loops"] > 100 and filters.STATS["segments"] > 100


def test_programs_without_filters_match_numpy_under_cluster(interpreted):
    """The "cluster" partitioner runs every stage by clustering, with externals for views."""
    lazy.configure(partitioner="cluster")

    @settings(max_examples=80, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(plain_programs)
    def inner(spec):
        with warnings.catch_warnings():
            warnings.simplefilter("error", lazy.FallbackWarning)
            check_plain(spec)
    inner()


@pytest.mark.parametrize("size", [st.integers(0, 50), st.just(20000)])
def test_random_filter_programs_compiled_with_numba(size):
    """Real Numba loops; 20000 elements take the parallel (chunked) form of a loop."""
    lazy.configure(eager_below=0)
    try:
        @settings(max_examples=5, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(st.tuples(st.sampled_from(["float64", "int64"]), size,
                         st.sampled_from(["random", "none", "all", "numpy", "and"]),
                         st.integers(0, 2**31), st.lists(_steps(), min_size=1, max_size=8)))
        def inner(spec):
            check(spec)
        inner()
    finally:
        lazy.configure(eager_below=1 << 15)


def test_filter_and_its_reductions_run_as_one_loop(interpreted):
    xn = numpy.random.default_rng(1).standard_normal(5000)
    x = lazy.asarray(xn)
    y = x[x > 0]
    s, m, c, k = y.sum(), y.max(), (y * 2).mean(), y.size
    del y
    filters.STATS.clear()
    lazy.flush()
    assert filters.STATS["loops"] == 1 and filters.STATS["externals"] == 0
    assert filters.STATS["stored"] == 0          # neither the mask nor y is written to memory
    want = xn[xn > 0]
    numpy.testing.assert_allclose([float(s), float(c)], [want.sum(), (want * 2).mean()])
    assert float(m) == want.max() and int(k) == want.size


def test_one_parallel_numba_loop_for_a_large_filter():
    xn = numpy.random.default_rng(3).integers(-9, 10, 60000)
    x = lazy.asarray(xn)
    y = x[(x > 0) & (x != 5)]
    s, m, c, k = y.sum(), y.min(), (y * 2).mean(), y.size
    del y
    filters.STATS.clear()
    lazy.flush()
    assert filters.STATS["loops"] == 1 and filters.STATS["parallel_loops"] == 1
    want = xn[(xn > 0) & (xn != 5)]
    assert (int(s), int(m), int(k)) == (want.sum(), want.min(), want.size)
    assert float(c) == (want * 2).mean()


def test_live_selection_is_stored_in_the_same_loop(interpreted):
    xn = numpy.arange(-5.0, 6.0)
    x = lazy.asarray(xn)
    y = x[x > 0]
    total = y.sum()
    filters.STATS.clear()
    assert float(total) == 15.0
    assert filters.STATS["loops"] == 1 and filters.STATS["stored"] == 1
    assert isinstance(y, Selection)
    numpy.testing.assert_array_equal(numpy.asarray(y), xn[xn > 0])
    assert len(y) == 5 and y.shape == (5,)


def test_selections_by_one_mask_combine_and_nest(interpreted):
    rng = numpy.random.default_rng(2)
    xn, zn = rng.standard_normal(200), rng.integers(-3, 4, 200)
    x, z = lazy.asarray(xn), lazy.asarray(zn)
    m = x > 0.5
    w = x[m] * z[m] + 1
    inner = w[w > 0]
    s, p = inner.sum(), (z[m] - z[m].mean()).max()
    filters.STATS.clear()
    mn = xn > 0.5
    wn = xn[mn] * zn[mn] + 1
    numpy.testing.assert_allclose(float(s), wn[wn > 0].sum())
    numpy.testing.assert_allclose(float(p), (zn[mn] - zn[mn].mean()).max())
    assert filters.STATS["loops"] == 2              # the max needs the mean first


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_empty_selection(interpreted, dtype):
    x = lazy.asarray(numpy.zeros(10, dtype))
    y = x[x > 1]
    s, p, a, e = y.sum(), y.prod(), y.any(), y.all()
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        mean = float(y.mean())
    assert numpy.isnan(mean)
    want = numpy.zeros(0, dtype)
    for got, ref in ((s, want.sum()), (p, want.prod()), (a, want.any()), (e, want.all())):
        assert numpy.asarray(got).dtype == ref.dtype and numpy.asarray(got) == ref
    assert int(y.size) == 0 and len(y) == 0
    for name in ("max", "min"):
        r = getattr(x[x > 1], name)()
        with pytest.raises(ValueError, match="zero-size array"):
            lazy.flush()
        del r
    with pytest.raises(ValueError, match="zero-size array"):
        y.max()                                   # computed already: NumPy's error at once


def test_long_segment_uses_the_stream_clustering(interpreted):
    """Above MAX_ILP nodes the pull-stream baseline clusters; results stay exact."""
    xn = numpy.arange(-20, 20)
    x = lazy.asarray(xn)
    y, yn = x[x % 3 != 0], xn[xn % 3 != 0]
    totals = []
    for k in range(filters.MAX_ILP):
        y, yn = y + k, yn + k
        totals.append((y.max(), yn.max()))
    filters.STATS.clear()
    lazy.flush()
    assert filters.STATS["plans_built"] + filters.STATS["plan_hits"] == 1
    assert [int(t) for t, _ in totals] == [int(t) for _, t in totals]


def test_two_d_selection_flattens_like_numpy(interpreted):
    a = numpy.arange(24.0).reshape(4, 6) - 10
    x = lazy.asarray(a)
    numpy.testing.assert_array_equal(numpy.asarray(x[x % 3 == 0]), a[a % 3 == 0])
    numpy.testing.assert_array_equal(numpy.asarray(x.T[x.T > 0]), a.T[a.T > 0])


def test_different_masks_sync_and_follow_numpy(interpreted):
    x = lazy.asarray(numpy.arange(10.0))
    with pytest.raises(ValueError):
        numpy.asarray(x[x > 2] + x[x > 5])
    numpy.testing.assert_array_equal(numpy.asarray(x[x > 4] + x[x < 5]),
                                     numpy.arange(5.0, 10) + numpy.arange(5.0))


def test_unknown_partitioner_lists_cluster():
    from flamefuse.errors import FlameError
    with pytest.raises(FlameError) as err:
        lazy.configure(partitioner="nope")
    assert "cluster" in err.value.diagnostic.render()


def test_a_stage_of_many_masks_runs_in_pieces(interpreted):
    """A histogram of means by bins (azimint): one stage of 60 masks, selections and means was
    one clustered loop whose Numba compile took minutes; it runs in pieces of at most
    SEGMENT_MAX ops, with NumPy's results."""
    from flamefuse.lazy.recorder import SEGMENT_MAX
    rng = numpy.random.default_rng(3)
    radius_, data_ = rng.random(2000), rng.random(2000)
    radius, data = lazy.asarray(radius_), lazy.asarray(data_)
    bins = 60
    before = filters.STATS["segments"]
    means = []
    for i in range(bins):
        mask = (i / bins <= radius) & (radius < (i + 1) / bins)
        means.append(data[mask].mean())
    got = [float(m) for m in means]
    want = [data_[(i / bins <= radius_) & (radius_ < (i + 1) / bins)].mean() for i in range(bins)]
    numpy.testing.assert_allclose(got, want, rtol=1e-13)
    assert filters.STATS["segments"] - before >= bins * 5 // SEGMENT_MAX
