"""Complex updates (masked and not) give NumPy's bits: ``**`` in its operator and ufunc forms.

NumPy's ``z ** 2`` (a Python int 2) is ``np.square`` (its SIMD loop, fma-rounded), ``z ** -1``
is ``np.reciprocal`` and ``z ** 0.5`` ``np.sqrt`` (the operator's fast path, float and complex
arrays only); ``np.power(z, 2)``, ``z ** 2.0``, ``z ** 3`` ... are its complex power loop
(binary powering with unfused products), whose bits differ from the square's in about a
quarter of the elements. Complex sqrt, exp, sin, cos, sinh, cosh are libm's (Numba's gave
``inf+nanj`` for ``exp(710+0j)``, another last bit for ``sqrt(1j)``). Each expression runs on NumPy and on lazy arrays; results must be
bitwise equal (NaNs where NumPy's are).
"""
from __future__ import annotations

import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy

EXPRS = {
    "pow2": lambda z, c: z ** 2,
    "pow2.0": lambda z, c: z ** 2.0,
    "pow3": lambda z, c: z ** 3,
    "pow4": lambda z, c: z ** 4,
    "pow-1": lambda z, c: z ** -1,
    "pow0.5": lambda z, c: z ** 0.5,
    "pow1.5": lambda z, c: z ** 1.5,
    "np.power2": lambda z, c: numpy.power(z, 2),
    "np.power3": lambda z, c: numpy.power(z, 3),
    "np.power0.5": lambda z, c: numpy.power(z, 0.5),
    "np.square": lambda z, c: numpy.square(z),
    "z*z": lambda z, c: z * z,
    "z*c": lambda z, c: z * c,
    "abs": lambda z, c: abs(z),
    "z+c": lambda z, c: z + c,
    "pow2+c": lambda z, c: z ** 2 + c,
    "np.power2+c": lambda z, c: numpy.power(z, 2) + c,
    "sqrt": lambda z, c: numpy.sqrt(z) + c,
    "exp": lambda z, c: numpy.exp(z) + c,
    "sin": lambda z, c: numpy.sin(z) * c,
    "cos": lambda z, c: numpy.cos(z) - c,
    "sinh": lambda z, c: numpy.sinh(z) + c,
    "cosh": lambda z, c: numpy.cosh(z) + c,
}


def _data(seed, n, dtype):
    rng = numpy.random.default_rng(seed)
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    c = (rng.uniform(-2, 1, n) + 1j * rng.uniform(-1.5, 1.5, n)).astype(dtype)
    z[:9] = [0, 1j, 1e30 + 1e30j, -0.0, 3 + 4j, 710, complex(numpy.inf, 0), 710j, -1j]
    c[:9] = 0
    return z, c


def _same(ref, got):
    ref, got = numpy.asarray(ref), numpy.asarray(got)
    assert got.dtype == ref.dtype
    both_nan = numpy.isnan(ref) & numpy.isnan(got)
    bad = (ref != got) & ~both_nan
    assert not bad.any(), (int(bad.sum()), ref[bad][:3], got[bad][:3])


def _unmasked(mod, name, z, c):
    with numpy.errstate(all="ignore"):
        return numpy.asarray(EXPRS[name](mod.asarray(z.copy()), mod.asarray(c.copy())))


def _masked(mod, name, z, c, iterations=3):
    """``mm = abs(z) < 2; z[mm] = f(z[mm], c[mm])``, Mandelbrot's update, a few times."""
    z, c = mod.asarray(z.copy()), mod.asarray(c.copy())
    with numpy.errstate(all="ignore"):
        for _ in range(iterations):
            mm = abs(z) < 2
            z[mm] = EXPRS[name](z[mm], c[mm])
    return numpy.asarray(z)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_updates_give_numpys_bits(interpreted, dtype):
    @settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(0, 2 ** 20), st.sampled_from(sorted(EXPRS)), st.booleans())
    def inner(seed, name, masked):
        z, c = _data(seed, 3000, dtype)
        run = _masked if masked else _unmasked
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _same(run(numpy, name, z, c), run(lazy, name, z, c))
            lazy.flush()
    inner()


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name", sorted(EXPRS))
def test_each_complex_expression_gives_numpys_bits(interpreted, dtype, name):
    z, c = _data(5, 4000, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(_unmasked(numpy, name, z, c), _unmasked(lazy, name, z, c))
        _same(_masked(numpy, name, z, c), _masked(lazy, name, z, c))


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_powers_in_numba_kernels_give_numpys_bits(dtype):
    """The same through Numba's kernels (the forms that fuse, and the ones that run as NumPy)."""
    lazy.configure(partitioner="greedy", eager_below=0)
    try:
        z, c = _data(11, 20_000, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in ("np.power2+c", "pow2+c", "pow2.0", "pow3", "pow-1", "pow0.5", "sqrt", "exp",
                         "sin", "cos", "sinh", "cosh"):
                _same(_unmasked(numpy, name, z, c), _unmasked(lazy, name, z, c))
                _same(_masked(numpy, name, z, c, 5), _masked(lazy, name, z, c, 5))
    finally:
        lazy.flush()
        lazy.configure(eager_below=1 << 15)


def test_complex_powers_in_native_libraries_give_numpys_bits(libraries):
    """Masked updates through Numba (wanting libraries), then through the built libraries."""
    from flamefuse.runtime import execute, native
    z, c = _data(12, 20_000, "complex128")
    names = ("np.power2+c", "pow2+c", "pow4", "pow-1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [_masked(numpy, name, z, c, 5) for name in names]
        for rnd in range(2):
            lazy.flush()
            execute._PLANS.clear()
            native._LOADED.clear()
            before = execute.STATS["native_loads"]
            for name, w in zip(names, want):
                _same(w, _masked(lazy, name, z, c, 5))
            if rnd == 0:
                assert lazy.build_native() >= 1
            else:
                assert execute.STATS["native_loads"] > before
