"""A transcendental ufunc on a large array (``np.exp``, ``np.arctan2`` ...) is NumPy's own call
where NumPy runs it with a SIMD loop (:mod:`flamefuse.runtime.simd`): 5-50x faster than the fused
kernel's scalar C-library call, and NumPy's result bit for bit (the kernel's ``exp`` differs from
NumPy's SIMD ``exp`` in the last bit on some elements). By default a cost model decides
(tests/runtime/test_simd_cost.py); ``FLAMEFUSE_NUMPY_SIMD=1`` splits every candidate with a SIMD
loop (here, for every test but the one that checks ``0``)."""
import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.runtime import simd

N = simd.MIN_ELEMENTS * 2
needs_simd = pytest.mark.skipif(not simd.simd_loop("exp", ("float64", "float64")),
                                reason="NumPy has no SIMD exp on this CPU")


@pytest.fixture(autouse=True)
def _on(monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_NUMPY_SIMD", "1")


def _x(seed=0):
    return numpy.random.default_rng(seed).uniform(-5.0, 5.0, N)


def _recorded(fn):
    lazy.flush()
    lazy.reset_stats()
    out = fn()
    result = out.numpy() if isinstance(out, lazy.LazyArray) else out
    return result, lazy.stats()["recorded"]


@needs_simd
@pytest.mark.parametrize("name", ["exp", "log1p", "tanh", "arcsinh"])
def test_a_transcendental_ufunc_of_a_pending_array_is_numpys(name):
    x = _x()
    want = getattr(numpy, name)(numpy.abs(x * 0.5 + 1.0))
    got, recorded = _recorded(lambda: getattr(lazy, name)(lazy.abs(lazy.asarray(x) * 0.5 + 1.0)))
    assert numpy.array_equal(got, want)
    assert recorded == 3          # the multiply, the add and the abs: not the transcendental one


@needs_simd
def test_sobels_arctan2_of_two_pending_differences_is_numpys():
    p = _x(1).reshape(512, -1)
    q = lazy.asarray(p)
    want = numpy.arctan2(p[2:, :-2] - p[:-2, :-2], p[:-2, 2:] - p[:-2, :-2])
    got, _ = _recorded(lambda: lazy.arctan2(q[2:, :-2] - q[:-2, :-2], q[:-2, 2:] - q[:-2, :-2]))
    assert numpy.array_equal(got, want)


@needs_simd
def test_into_an_output_array_and_nan_inf():
    x = _x(2)
    x[:4] = [numpy.nan, numpy.inf, -numpy.inf, 0.0]
    want = numpy.zeros(N)
    with numpy.errstate(all="ignore"):
        numpy.exp(x, out=want)
        out = lazy.zeros(N)
        lazy.exp(lazy.asarray(x) + 0.0, out=out)
        got = out.numpy()
    assert numpy.array_equal(got, want, equal_nan=True)


@needs_simd
def test_a_general_power_and_float32():
    x = numpy.abs(_x(3)).astype(numpy.float32) + 1
    want = numpy.power(x * 2, numpy.float32(0.3))
    got, _ = _recorded(lambda: lazy.power(lazy.asarray(x) * 2, numpy.float32(0.3)))
    assert got.dtype == want.dtype and numpy.array_equal(got, want)


def test_off_it_is_fused(monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_NUMPY_SIMD", "0")
    x = _x()
    got, recorded = _recorded(lambda: lazy.exp(lazy.asarray(x) * 0.5))
    assert recorded == 2
    assert numpy.allclose(got, numpy.exp(x * 0.5), rtol=1e-15, atol=0)


def test_small_arrays_and_other_ufuncs_stay_fused():
    x = _x()[: simd.MIN_ELEMENTS // 2]
    assert not simd.numpy_faster("exp", ("float64", "float64"), x.size)
    assert not simd.numpy_faster("sqrt", ("float64", "float64"), N)      # not a candidate
    assert not simd.numpy_faster("exp", ("int64", "float64"), N)         # mixed dtypes: fused
    got, recorded = _recorded(lambda: lazy.exp(lazy.asarray(x) * 0.5))
    assert recorded == 2
    assert numpy.allclose(got, numpy.exp(x * 0.5), rtol=1e-15, atol=0)
