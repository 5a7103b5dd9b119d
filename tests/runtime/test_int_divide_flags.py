"""Integer ``//`` and ``%`` by a scalar in fused kernels: no floating-point flag of their own.

An integer division by zero is 0 in a fused kernel, and NumPy warns "divide by zero encountered
in remainder". The kernels raised that flag with a float division on the zero-divisor branch,
which LLVM is free to evaluate whatever the branch (it has no strict floating-point model); the
native libraries' loops did, so every flush of ising's ``(i + j) % 2`` raised the flag and ran
again as NumPy's calls for its warnings (none): ising's fused kernel took 3.4 s against 0.42 s.
A scalar divisor is known at the flush, so the flush tests it instead
(:func:`flamefuse.runtime.kernel.scalar_divisors`)."""
import warnings

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.lazy import fpstate
from flamefuse.runtime import execute, fpflags, native


def _program(np, k, m, divisor):
    """ising's checkerboard colours and a stencil's parity, from computed integer grids."""
    i, j = np.asarray(k), np.asarray(m)
    s = np.roll(i, 1, 0) + np.roll(j, -1, 1)
    return [(i + j) % divisor == 0, (s // divisor) * 3 + (i + j) % divisor]


def _run(mod, w, *args):
    with w.catch_warnings(record=True) as seen:
        w.simplefilter("always")
        out = [numpy.array(x) for x in _program(mod, *args)]
    return [str(m.message) for m in seen if issubclass(m.category, RuntimeWarning)], out


@pytest.fixture
def reruns(monkeypatch):
    """The flushes run again as NumPy's calls for their warnings."""
    count = [0]
    real = execute.warn_like_numpy

    def counted(*args):
        count[0] += 1
        return real(*args)
    monkeypatch.setattr(execute, "warn_like_numpy", counted)
    return count


def test_a_scalar_divisor_leaves_the_flag_to_the_flush(libraries, reruns):
    if not fpflags.AVAILABLE:
        pytest.skip("no fetestexcept in this C library")
    k, m = numpy.indices((300, 300))
    want = _run(numpy, warnings, k, m, 2)
    assert want[0] == []
    first = _run(lazy, fpstate.warnings_module(), k, m, 2)          # Numba's kernels
    assert lazy.build_native() >= 1
    lazy.flush()
    execute._PLANS.clear()
    native._LOADED.clear()
    reruns[0] = 0
    got = _run(lazy, fpstate.warnings_module(), k, m, 2)            # the native libraries
    assert any(s.entry and getattr(s.entry[0], "library", None) is not None
               for p in execute._PLANS.values() for s in p.steps)
    assert got[0] == [] and first[0] == []
    assert reruns[0] == 0                   # no flag raised: not run again as NumPy's calls
    for a, b in zip(got[1], want[1]):
        numpy.testing.assert_array_equal(a, b)


def test_a_zero_scalar_divisor_warns_as_numpy(libraries):
    if not fpflags.AVAILABLE:
        pytest.skip("no fetestexcept in this C library")
    k, m = numpy.indices((300, 300))
    want = _run(numpy, warnings, k, m, 0)
    assert want[0] == ["divide by zero encountered in remainder",
                       "divide by zero encountered in floor_divide",
                       "divide by zero encountered in remainder"]
    got = _run(lazy, fpstate.warnings_module(), k, m, 0)
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1]):
        numpy.testing.assert_array_equal(a, b)


def test_scalar_divisors_names_integer_divisions_by_scalars_only():
    from flamefuse.runtime.kernel import scalar_divisors
    from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
    from flamefuse.runtime.views import View
    v = View(0, (10,), (1,))
    r = [Ref(b, v) for b in range(4)]
    ops = (Op("ew", "remainder", r[1], (r[0], Scalar(0, "int64")), (10,), ("int64",) * 3),
           Op("ew", "floor_divide", r[2], (r[0], r[1]), (10,), ("int64",) * 3),
           Op("ew", "floor_divide", r[3], (r[0], Scalar(1, "float64")), (10,), ("float64",) * 3),
           Op("ew", "floor_divide", r[3], (r[0], Scalar(2, "int64")), (0,), ("int64",) * 3))
    prog = Program(ops, tuple(BaseInfo("int64", 10, b > 0, True) for b in range(4)))
    assert scalar_divisors(prog) == (0,)


def _array_divisor(np, a, d):
    x, y = np.asarray(a), np.asarray(d)
    return [((x + 1) // y).sum(), (x * 3) % (y + 1)]


def test_an_array_divisor_raises_the_flag_only_where_it_is_zero(libraries, reruns):
    """The native library's loop of ``(a + 1) // d`` (d never zero) raised the flag: its float
    division by ``(x - 0.5) * 0.0`` was evaluated for every element. One zero divisor still
    warns as NumPy does."""
    if not fpflags.AVAILABLE:
        pytest.skip("no fetestexcept in this C library")
    a = numpy.arange(90_000, dtype=numpy.int64).reshape(300, 300)
    d = a % 7 + 1
    want = _run_with(numpy, warnings, a, d)
    assert want[0] == []
    _run_with(lazy, fpstate.warnings_module(), a, d)                  # Numba's kernels
    assert lazy.build_native() >= 1
    lazy.flush()
    execute._PLANS.clear()
    native._LOADED.clear()
    reruns[0] = 0
    got = _run_with(lazy, fpstate.warnings_module(), a, d)            # the native libraries
    assert any(s.entry and getattr(s.entry[0], "library", None) is not None
               for p in execute._PLANS.values() for s in p.steps)
    assert got[0] == [] and reruns[0] == 0
    for g, w in zip(got[1], want[1]):
        numpy.testing.assert_array_equal(g, w)
    z = d.copy()
    z[-1, -2] = 0
    want = _run_with(numpy, warnings, a, z)
    assert want[0] == ["divide by zero encountered in floor_divide"]
    got = _run_with(lazy, fpstate.warnings_module(), a, z)
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        numpy.testing.assert_array_equal(g, w)


def _run_with(mod, w, a, d):
    with w.catch_warnings(record=True) as seen:
        w.simplefilter("always")
        out = [numpy.array(x) for x in _array_divisor(mod, a, d)]
    return [str(m.message) for m in seen if issubclass(m.category, RuntimeWarning)], out
