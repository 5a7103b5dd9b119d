"""Differential stress test: random small programs under NumPy and under flamefuse.lazy.

Each program is a list of steps on a few float64 arrays of one length: element-wise
operations (``+ - * maximum sqrt abs where``), views (reversed, strided, shifted slices),
in-place updates through views (``a[1:] += b[:-1]``, overlapping ones included), element
reads and writes, reductions, pickling round trips, ``copy.deepcopy``, ``np.random``'s
in-place ``shuffle`` (a generator and the legacy function, seeded), and read-only views
(``setflags(write=False)``, ``broadcast_to``) that later steps try to write. The same
program runs on ``numpy`` and on ``flamefuse.lazy`` (kernels interpreted, every operation
recorded, or with the default eager threshold); every array must equal NumPy's bit for bit,
every error must be NumPy's (type and message), element reads are NumPy's scalars, and
sums and means agree within a small tolerance (NumPy sums pairwise).
"""
import copy
import pickle
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy

N = 37
VARS = 4

_index = st.integers(0, 63)
STEP = st.one_of(
    st.tuples(st.just("binary"), _index, _index, st.sampled_from(["add", "subtract", "multiply",
                                                                  "maximum", "where"])),
    st.tuples(st.just("unary"), _index, st.sampled_from(["sqrt_abs", "negative", "scale"])),
    st.tuples(st.just("view"), _index, st.sampled_from(["reverse", "shift"])),
    st.tuples(st.just("inplace"), _index, _index, st.sampled_from(["iadd", "imul", "shifted"])),
    st.tuples(st.just("setitem"), _index, _index, st.floats(-9, 9, allow_nan=False)),
    st.tuples(st.just("element"), _index, _index),
    st.tuples(st.just("reduce"), _index, st.sampled_from(["sum", "max", "min", "mean"])),
    st.tuples(st.just("pickle"), _index),
    st.tuples(st.just("deepcopy"), _index),
    st.tuples(st.just("shuffle"), _index, st.integers(0, 3), st.booleans()),
    st.tuples(st.just("readonly"), _index),
    st.tuples(st.just("broadcast"), _index),
)


def _run(np, steps):
    """Run ``steps`` with module ``np``: (arrays, observations)."""
    arrays = [np.arange(float(N)) * (k + 1) - 3.0 * k for k in range(VARS)]
    seen = []

    def pick(i):
        return arrays[i % len(arrays)]

    for step in steps:
        kind = step[0]
        try:
            if kind == "binary":
                a, b = pick(step[1]), pick(step[2])
                if a.shape != b.shape:
                    continue
                fn = step[3]
                arrays.append(np.where(a > b, a, b * 0.5) if fn == "where" else getattr(np, fn)(a, b))
            elif kind == "unary":
                a = pick(step[1])
                arrays.append(np.sqrt(np.abs(a)) if step[2] == "sqrt_abs" else
                              -a if step[2] == "negative" else a * 2.5)
            elif kind == "view":
                a = pick(step[1])
                arrays.append(a[::-1] if step[2] == "reverse" else a[1:])
            elif kind == "inplace":
                a, b = pick(step[1]), pick(step[2])
                if step[3] == "shifted":
                    a[1:] += b[:-1] if b.shape == a.shape else 1.0
                elif a.shape == b.shape:
                    if step[3] == "iadd":
                        a += b
                    else:
                        a *= b
            elif kind == "setitem":
                a = pick(step[1])
                if a.ndim == 1:
                    a[step[2] % a.shape[0]] = step[3]
            elif kind == "element":
                a = pick(step[1])
                if a.ndim == 1:
                    seen.append(("element", a[step[2] % a.shape[0]]))
            elif kind == "reduce":
                seen.append((step[2], getattr(pick(step[1]), step[2])()))
            elif kind == "pickle":
                arrays.append(np.asarray(pickle.loads(pickle.dumps(pick(step[1])))))
            elif kind == "deepcopy":
                arrays.append(copy.deepcopy(pick(step[1])))
            elif kind == "shuffle":
                a = pick(step[1])
                if step[3]:
                    np.random.default_rng(step[2]).shuffle(a)
                else:
                    np.random.seed(step[2])
                    np.random.shuffle(a)
            elif kind == "readonly":
                v = pick(step[1])[::1]
                v.setflags(write=False)
                arrays.append(v)
            elif kind == "broadcast":
                a = pick(step[1])
                if a.ndim == 1:
                    arrays.append(np.broadcast_to(a, (2, a.shape[0]))[1])
        except (ValueError, TypeError) as err:
            seen.append(("error", type(err).__name__, str(err)))
    return arrays, seen


def _compare(got, want):
    arrays, seen = got
    want_arrays, want_seen = want
    assert len(arrays) == len(want_arrays)
    for g, w in zip(arrays, want_arrays):
        numpy.testing.assert_array_equal(numpy.asarray(g), w, strict=True)
    assert len(seen) == len(want_seen)
    for g, w in zip(seen, want_seen):
        assert g[0] == w[0]
        if w[0] == "error":
            assert g == w
        elif w[0] == "element":
            assert type(g[1]) is type(w[1]) and g[1] == w[1]
        else:
            value = numpy.asarray(g[1])[()]
            assert type(value) is type(w[1])
            if w[0] in ("sum", "mean"):
                assert abs(value - w[1]) <= 1e-12 * max(1.0, abs(w[1]) * N)
            else:
                assert value == w[1]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(STEP, min_size=1, max_size=14), eager=st.booleans())
def test_random_programs_match_numpy(monkeypatch, steps, eager):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(eager_below=1 << 15 if eager else 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            want = _run(numpy, steps)
            got = _run(lazy, steps)
            _compare(got, want)
    finally:
        lazy.flush()
        lazy.configure(eager_below=1 << 15)


def test_a_program_with_every_step():
    """One fixed program through every kind of step (fails before issue 26's fixes)."""
    steps = [("binary", 0, 1, "add"), ("view", 4, "reverse"), ("readonly", 0),
             ("inplace", 6, 1, "iadd"), ("setitem", 6, 3, 1.0), ("element", 4, 2),
             ("inplace", 4, 5, "shifted"), ("element", 5, 0), ("pickle", 4), ("deepcopy", 5),
             ("shuffle", 4, 1, True), ("shuffle", 5, 2, False), ("broadcast", 2),
             ("setitem", 9, 0, 2.0), ("reduce", 4, "sum"), ("reduce", 5, "max"),
             ("unary", 7, "sqrt_abs"), ("binary", 10, 3, "where")]
    lazy.configure(eager_below=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            _compare(_run(lazy, steps), _run(numpy, steps))
    finally:
        lazy.flush()
        lazy.configure(eager_below=1 << 15)
