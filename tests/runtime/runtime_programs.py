"""Random array programs run in lockstep on NumPy and flamefuse.lazy (shared by the tests)."""
from __future__ import annotations

import numpy
from hypothesis import strategies as st

import flamefuse.lazy as lazy

DTYPES = ["float64", "float32", "int64", "bool"]
SHAPE = (5, 4)
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "less", "equal",
          "greater_equal", "logical_and", "logical_or"]
UNARY = ["negative", "absolute", "invert", "logical_not"]


def _step():
    idx = st.integers(0, 5)
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(BINARY), idx, idx, st.sampled_from(["full", "row", "col", "scalar", "zero_d"])),
        st.tuples(st.just("un"), st.sampled_from(UNARY), idx),
        st.tuples(st.just("where"), idx, idx, idx),
        st.tuples(st.just("iadd"), idx, idx, st.sampled_from(["same", "shift", "half"])),
        st.tuples(st.just("set"), idx, idx, st.sampled_from(["all", "shift", "scalar"])),
        st.tuples(st.just("red"), st.sampled_from(["sum", "max", "min", "prod"]), idx, st.sampled_from([None, 0, 1])),
        st.tuples(st.just("cast"), idx, st.sampled_from(DTYPES)),
        st.tuples(st.just("del"), idx),
    )


programs = st.tuples(st.lists(st.sampled_from(DTYPES), min_size=3, max_size=3),
                     st.integers(0, 2**31), st.lists(_step(), min_size=1, max_size=12))


def _operand(mod, pool, k, how):
    x = pool[k % len(pool)]
    if how == "row" and x.ndim == 2:
        return x[1]
    if how == "col" and x.ndim == 2:
        return x[:, 2:3]
    if how == "scalar":
        return 2 if x.dtype != bool else True
    if how == "zero_d" and x.ndim >= 1:
        return mod.sum(x) if x.dtype != bool else x[(0,) * x.ndim]
    return x


def _valid(name, *dts):
    if any(d == numpy.bool_ for d in dts):
        if name in ("subtract", "negative"):
            return False
    if name == "invert" and any(d.kind == "f" for d in dts):
        return False
    return True


def _fits(*xs) -> bool:
    try:
        numpy.broadcast_shapes(*[numpy.shape(x) for x in xs], SHAPE)
        return True
    except ValueError:
        return False


def run(mod, spec):
    """Run program ``spec`` with module ``mod`` (numpy or flamefuse.lazy); return the live arrays."""
    dtypes, seed, steps = spec
    rng = numpy.random.default_rng(seed)
    pool = [mod.asarray(rng.integers(-3, 4, SHAPE).astype(d)) for d in dtypes]
    for step in steps:
        kind = step[0]
        if not pool:
            break
        if kind == "bin":
            _, name, i, j, how = step
            a, b = pool[i % len(pool)], _operand(mod, pool, j, how)
            bd = b.dtype if hasattr(b, "dtype") else numpy.asarray(b).dtype
            if _valid(name, a.dtype, bd) and _fits(a, b):
                pool.append(getattr(mod, name)(a, b))
        elif kind == "un":
            _, name, i = step
            a = pool[i % len(pool)]
            if _valid(name, a.dtype):
                pool.append(getattr(mod, name)(a))
        elif kind == "where":
            _, c, i, j = step
            cond = pool[c % len(pool)]
            if cond.shape == SHAPE and _fits(pool[i % len(pool)], pool[j % len(pool)]):
                pool.append(mod.where(cond > 0, pool[i % len(pool)], pool[j % len(pool)]))
        elif kind == "iadd":
            _, i, j, how = step
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            if a.shape != SHAPE or b.shape != SHAPE or a.dtype == bool \
                    or not numpy.can_cast(numpy.result_type(a.dtype, b.dtype), a.dtype, "same_kind"):
                continue
            if how == "same":
                a += b
            elif how == "shift":
                a[1:, :] += b[:-1, :]
            else:
                a[:, :2] += a[:, 2:]
        elif kind == "set":
            _, i, j, how = step
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            if a.shape != SHAPE or b.shape != SHAPE:
                continue
            if how == "all":
                a[:] = b
            elif how == "shift":
                a[:-1] = a[1:]
            else:
                a[1:3, 1:] = 1
        elif kind == "red":
            _, name, i, axis = step
            a = pool[i % len(pool)]
            if a.ndim == 0 or (axis is not None and axis >= a.ndim):
                continue
            if name == "prod" and a.dtype.kind == "f":
                continue
            pool.append(getattr(mod, name)(a, axis=axis))
        elif kind == "cast":
            _, i, d = step
            pool.append(pool[i % len(pool)].astype(d))
        elif kind == "del":
            del pool[step[1] % len(pool)]
    return pool


def check(spec):
    expected = run(numpy, spec)
    got = run(lazy, spec)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g = numpy.asarray(g)
        assert g.dtype == numpy.asarray(e).dtype, (g.dtype, numpy.asarray(e).dtype)
        numpy.testing.assert_array_equal(g, e)


def fused_and_numpy(program, mode: str, monkeypatch, recorded: int, quiet: bool = False) -> tuple:
    """``(got, want)``: ``program(flamefuse.lazy)`` with every operation recorded (``mode``
    "compiled", or "interpreted": ``FLAMEFUSE_JIT=0``), checked to have recorded at least
    ``recorded`` operations and compiled nothing in the background, and ``program(numpy)``;
    ``quiet``: NumPy's ``RuntimeWarning`` ignored in both."""
    import warnings
    if mode == "interpreted":
        monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    lazy.reset_stats()
    try:
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore", RuntimeWarning)
            got = program(lazy)
        stats = lazy.stats()
        assert stats["recorded"] >= recorded and not stats.get("background_deferred_flushes")
    finally:
        lazy.configure(eager_below=1 << 15)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", RuntimeWarning)
        want = program(numpy)
    return got, want
