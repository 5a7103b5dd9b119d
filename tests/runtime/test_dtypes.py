"""Precisions in flamefuse.lazy: float32 stays float32, complex arithmetic fuses, per dtype vs NumPy.

NumPy 2 promotion: a Python scalar does not upcast an array (float32 * 2.0 is
float32; complex64 * 2.0 is complex64). Each random expression runs on NumPy
and on lazy arrays; dtypes must be equal and values close to the precision.
"""
from __future__ import annotations

import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy

DTYPES = ["float32", "float64", "complex64", "complex128"]
RTOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-11, "complex128": 1e-11}
BINARY = ["add", "subtract", "multiply", "true_divide"]
UNARY = ["negative", "square", "sqrt", "exp", "conj_free"]

steps = st.lists(st.one_of(
    st.tuples(st.just("bin"), st.sampled_from(BINARY), st.integers(0, 5), st.integers(0, 5)),
    st.tuples(st.just("scalar"), st.sampled_from(BINARY), st.integers(0, 5),
              st.sampled_from([2, 0.5, 1.5, 3j, 1 - 0.5j])),
    st.tuples(st.just("un"), st.sampled_from(UNARY), st.integers(0, 5)),
), min_size=1, max_size=8)


def run(mod, dtype, seed, program):
    rng = numpy.random.default_rng(seed)
    real = rng.uniform(0.5, 1.5, (3, 5000))
    data = real + 1j * rng.uniform(-0.5, 0.5, (3, 5000)) if dtype.startswith("complex") else real
    pool = [mod.asarray(x.astype(dtype)) for x in data]
    for step in program:
        a = pool[step[2] % len(pool)]
        if step[0] == "bin":
            pool.append(getattr(mod, step[1])(a, pool[step[3] % len(pool)]))
        elif step[0] == "scalar":
            if isinstance(step[3], complex) and not dtype.startswith("complex"):
                continue
            pool.append(getattr(mod, step[1])(a, step[3]))
        elif step[1] == "conj_free":
            pool.append(a * 0.25 + 1)
        else:
            pool.append(getattr(mod, step[1])(a))
    last = pool[-1]
    return [numpy.asarray(x) for x in pool] + [numpy.asarray(mod.sum(last)), numpy.asarray(mod.mean(last)),
                                               numpy.asarray(mod.prod(last[:8]))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_programs_keep_the_dtype_and_match_numpy(interpreted, dtype):
    @settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(0, 2 ** 20), steps)
    def inner(seed, program):
        with warnings.catch_warnings():
            warnings.simplefilter("error", lazy.FallbackWarning)     # every step fuses
            warnings.simplefilter("ignore", RuntimeWarning)          # overflow in exp chains, as NumPy
            got = run(lazy, dtype, seed, program)
        with numpy.errstate(all="ignore"):
            want = run(numpy, dtype, seed, program)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            scale = numpy.nanmax(numpy.abs(w), initial=0.0) if numpy.isfinite(w).any() else 0.0
            numpy.testing.assert_allclose(g, w, rtol=RTOL[dtype], atol=RTOL[dtype] * scale, equal_nan=True)
    inner()


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_kernel_per_dtype(dtype):
    """The same through real Numba kernels: one program per dtype, fused into one block."""
    lazy.configure(eager_below=0)
    try:
        before = lazy.stats().get("blocks", 0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", lazy.FallbackWarning)
            got = run(lazy, dtype, 7, [("scalar", "multiply", 0, 2), ("bin", "add", 3, 1), ("un", "sqrt", 4, 0)])
        want = run(numpy, dtype, 7, [("scalar", "multiply", 0, 2), ("bin", "add", 3, 1), ("un", "sqrt", 4, 0)])
        assert lazy.stats().get("blocks", 0) > before
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            numpy.testing.assert_allclose(g, w, rtol=RTOL[dtype])
    finally:
        lazy.configure(eager_below=1 << 15)


def test_complex_operations_outside_the_fused_set_fall_back_visibly():
    z = lazy.asarray(numpy.ones(40000, dtype=complex))
    with pytest.warns(lazy.FallbackWarning):
        lazy.maximum(z, z)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32"])
def test_narrow_integers_overflow_like_numpy_inside_fused_kernels(dtype):
    """A contracted temporary of a narrow integer type wraps as NumPy's array does (Numba
    computes int8 * int8 in int64; the kernel narrows the result)."""
    info = numpy.iinfo(dtype)
    x = numpy.linspace(info.min, info.max, 120).astype(dtype).reshape(8, 15)
    lazy.configure(eager_below=0)
    try:
        got = lazy.asarray(x) * 3 + 7
        got = (got.max(), got.min(), (lazy.asarray(x) * 5).sum(axis=0))
    finally:
        lazy.configure(eager_below=1 << 15)
    want = ((x * 3 + 7).max(), (x * 3 + 7).min(), (x * 5).sum(axis=0))
    for g, w in zip(got, want):
        numpy.testing.assert_array_equal(numpy.asarray(g), w)
