"""flamefuse.lazy front end: sync points, fallbacks, views, reductions, externals, caches."""
import warnings

import numpy
import pytest
import scipy.linalg

import flamefuse.lazy as lazy
from flamefuse.errors import FlameError
from flamefuse.runtime import execute, kernel


@pytest.fixture(autouse=True)
def recording():
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    lazy.reset_stats()
    yield
    lazy.configure(eager_below=1 << 15)


def test_operations_are_recorded_until_a_sync_point():
    a = lazy.ones(100)
    b = a * 3.0 + 1.0
    assert b._base.data is None and lazy.stats()["recorded"] == 3
    assert float(lazy.sum(b)) == 400.0
    assert lazy.stats()["flushes"] == 1


def test_every_supported_unary_ufunc_in_one_compiled_kernel():
    x = numpy.linspace(0.1, 0.9, 50)
    names = sorted(n for n in kernel.NP_FUNCS | {"negative", "absolute", "square"}
                   if getattr(numpy, n).nin == 1 and n not in ("arccosh",))
    a = lazy.asarray(x)
    results = {n: getattr(lazy, n)(a) for n in names}
    before = kernel.COUNTS["compiled"] + kernel.COUNTS["disk_hits"]
    lazy.flush()
    assert kernel.COUNTS["compiled"] + kernel.COUNTS["disk_hits"] - before == 1
    for n, r in results.items():
        numpy.testing.assert_allclose(numpy.asarray(r), getattr(numpy, n)(x), rtol=1e-13, err_msg=n)


def test_binary_ufuncs_broadcasting_and_dtypes():
    x = numpy.arange(12, dtype=numpy.int64).reshape(3, 4) - 5
    y = numpy.array([1.5, -2.0, 0.5, 3.0], dtype=numpy.float32)
    a, b = lazy.asarray(x), lazy.asarray(y)
    cases = {"a+b": (a + b, x + y), "a*2.5": (a * 2.5, x * 2.5), "b/2": (b / 2, y / 2),
             "a//3": (a // 3, x // 3), "a%3": (a % 3, x % 3), "a<b": (a < b, x < y),
             "~(a>0)": (~(a > 0), ~(x > 0)), "max": (lazy.maximum(a, b), numpy.maximum(x, y)),
             "where": (lazy.where(a > 0, a, b), numpy.where(x > 0, x, y)),
             "clip": (lazy.clip(a, -2, 3), numpy.clip(x, -2, 3)), "abs": (abs(a), abs(x)),
             "astype": (a.astype(numpy.float32) * b, x.astype(numpy.float32) * y),
             "pow": (b ** 2, y ** 2), "and": ((a > 0) & (a < 4), (x > 0) & (x < 4))}
    for key, (got, want) in cases.items():
        got = numpy.asarray(got)
        assert got.dtype == want.dtype, key
        numpy.testing.assert_allclose(got, want, rtol=1e-6, err_msg=key)


def test_reductions_over_all_and_one_axis():
    x = numpy.arange(24, dtype=numpy.int64).reshape(2, 3, 4) - 7
    a = lazy.asarray(x)
    for name in ("sum", "prod", "min", "max", "any", "all"):
        for axis in (None, 0, 1, 2, -1):
            got, want = getattr(lazy, name)(a, axis=axis), getattr(numpy, name)(x, axis=axis)
            numpy.testing.assert_array_equal(numpy.asarray(got), want)
            assert numpy.asarray(got).dtype == numpy.asarray(want).dtype
    numpy.testing.assert_allclose(numpy.asarray(a.mean(axis=1)), x.mean(axis=1))
    assert float(lazy.mean(a)) == x.mean()


def test_in_place_updates_of_views():
    x = numpy.arange(20.0).reshape(4, 5)
    a = lazy.asarray(x.copy())
    y = x.copy()
    for arr, mod in ((a, lazy), (y, numpy)):
        c = arr[1:-1, 1:-1]
        w = 0.25 * (arr[:-2, 1:-1] + arr[2:, 1:-1] + arr[1:-1, :-2] + arr[1:-1, 2:])
        c[:] = w
        arr[0] += arr[-1]
        arr[:, 0] = 7
        arr[1:, ::2] *= -1.0
    numpy.testing.assert_array_equal(numpy.asarray(a), y)
    assert a[2, 3].item() == y[2, 3] and a.T.shape == (5, 4)
    numpy.testing.assert_array_equal(numpy.asarray(a.T[1]), y.T[1])


def test_unsupported_operations_fall_back_visibly():
    x = numpy.array([3.0, 1.0, 2.0])
    a = lazy.asarray(x)
    with pytest.warns(lazy.FallbackWarning, match="heaviside"):
        s = lazy.heaviside(a * 2 - 4, 0.5)
    with pytest.warns(lazy.FallbackWarning, match="fancy indexing"):
        f = a[[2, 0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        t = lazy.sort(a * 2)            # NumPy's sort is the right implementation: no warning
    numpy.testing.assert_array_equal(numpy.asarray(s), numpy.heaviside(x * 2 - 4, 0.5))
    numpy.testing.assert_array_equal(numpy.asarray(f), x[[2, 0]])
    numpy.testing.assert_array_equal(numpy.asarray(t), numpy.sort(x * 2))
    st = lazy.stats()
    assert st["fallbacks"] == 2 and st["fallback_names"] == {"heaviside": 1, "fancy indexing": 1}
    assert st["native_names"] == {"sort": 1}


def test_numpy_functions_on_lazy_arrays_dispatch_or_fall_back():
    x = numpy.arange(6.0)
    a = lazy.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        total = numpy.sum(numpy.sqrt(a) * x)
    assert isinstance(total, lazy.LazyArray)
    assert float(total) == pytest.approx(float(numpy.sum(numpy.sqrt(x) * x)))
    with pytest.warns(lazy.FallbackWarning, match="sinc"):
        numpy.testing.assert_array_equal(numpy.asarray(numpy.sinc(a)), numpy.sinc(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        numpy.testing.assert_array_equal(numpy.asarray(numpy.cumsum(a)), numpy.cumsum(x))


def test_external_operation_syncs_and_keeps_in_place_results():
    m = numpy.array([[4.0, 1.0], [1.0, 3.0]])
    a = lazy.asarray(m) * 2.0
    chol = lazy.external(scipy.linalg.cholesky)(a, lower=True)
    assert isinstance(chol, lazy.LazyArray)
    fallbacks = lazy.stats().get("fallbacks", 0)
    product = chol @ chol.T          # matrix @ matrix: a recorded linear-algebra call (flamefuse.lazy.linalg)
    assert lazy.stats().get("fallbacks", 0) == fallbacks
    numpy.testing.assert_allclose(numpy.asarray(product), 2 * m)

    def scale_in_place(x):
        x *= 10.0
    b = lazy.asarray(m) + 1.0
    lazy.external(scale_in_place)(b)
    numpy.testing.assert_array_equal(numpy.asarray(b + 0.0), (m + 1) * 10)
    assert lazy.stats()["external_names"] == ["cholesky", "scale_in_place"]
    numpy.testing.assert_allclose(scipy.linalg.solve(lazy.asarray(m) * 1.0, numpy.ones(2)),
                                  numpy.linalg.solve(m, numpy.ones(2)))


def test_merge_cache_partitions_and_compiles_a_loop_body_once():
    g = lazy.zeros((30, 30))
    g[0, :] = 1.0
    lazy.flush()
    lazy.reset_stats()
    for _ in range(6):
        c = g[1:-1, 1:-1]
        c[:] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        float(lazy.sum(c))
    st = lazy.stats()
    assert st["plans_built"] == 1 and st["plan_hits"] == 5


def test_disk_cache_lives_in_the_cache_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    src = "import numpy as np\nfrom numba import njit, prange\n\n@njit(cache=True)\ndef kernel(a0):\n    a0[0] = 42.0\n"
    monkeypatch.setattr(kernel, "_MEMORY", {})
    before = dict(kernel.COUNTS)
    k1 = kernel.compile_kernel(src)
    monkeypatch.setattr(kernel, "_MEMORY", {})
    k2 = kernel.compile_kernel(src)
    x = numpy.zeros(1)
    k2(x)
    assert x[0] == 42.0 and k1 is k2      # one module per source in a process
    assert kernel.COUNTS["compiled"] - before.get("compiled", 0) == 1
    assert kernel.COUNTS["disk_hits"] - before.get("disk_hits", 0) == 1
    assert list((tmp_path / "kernels").glob("ffk_*.py"))


def test_dead_temporaries_are_contracted():
    a = lazy.asarray(numpy.arange(1000.0))
    t = a * 2.0
    u = t + 1.0
    del t
    r = u * u
    del u
    numpy.testing.assert_array_equal(numpy.asarray(r), (numpy.arange(1000.0) * 2 + 1) ** 2)
    plan = list(execute._PLANS.values())[-1]
    assert len(plan.steps) == 1 and len(plan.gone) == 2


def test_small_computed_inputs_run_eagerly():
    lazy.configure(eager_below=100)
    a = lazy.asarray(numpy.arange(10.0))
    b = a * 2 + 1
    # a * 2 runs in NumPy and is NumPy's result, so + 1 is plain NumPy (not even counted)
    assert type(b) is numpy.ndarray and lazy.stats()["eager"] == 1
    numpy.testing.assert_array_equal(b, numpy.arange(10.0) * 2 + 1)
    assert lazy.stats().get("recorded", 0) == 0
    big = lazy.ones(1000) * 3.0                    # a small NumPy result meets a lazy array
    mixed = big[:10] + b
    assert isinstance(mixed, lazy.LazyArray)
    numpy.testing.assert_array_equal(numpy.asarray(mixed), numpy.arange(10.0) * 2 + 4)
    assert lazy.sum(b) == 100.0 and type(lazy.sum(b)) is numpy.float64


def test_bad_partitioner_name_is_a_flame_error():
    with pytest.raises(FlameError, match="unknown partitioner"):
        lazy.configure(partitioner="best")


def test_every_partitioner_gives_the_same_heat_result():
    want = None
    for name in ("singleton", "linear", "greedy", "unintrusive", "optimal", "cpsat"):
        lazy.configure(partitioner=name)
        g = lazy.zeros((20, 20))
        g[0, :] = 100.0
        for _ in range(3):
            c = g[1:-1, 1:-1]
            w = 0.2 * (c + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2] + g[2:, 1:-1])
            d = lazy.sum(lazy.abs(w - c))
            c[:] = w
        got = (numpy.asarray(g).copy(), float(d))
        if want is None:
            want = got
        numpy.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
    lazy.configure(partitioner="greedy")
