"""A ufunc called on scalars only (``np.tanh(a[i, i])`` in a loop): NumPy's own call, its result
(value and type) exactly, without the recording wrapper (issue #29: that wrapper cost 4-5x
NumPy's call per scalar operation). ``np.power(2.0, 3.0)`` was Python's ``2.0 ** 3.0`` (a
``float``) where NumPy gives a ``numpy.float64``."""
import math

import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy

UNARY = ["tanh", "sqrt", "exp", "negative", "absolute", "sin", "floor", "isnan", "square"]
BINARY = ["add", "multiply", "power", "true_divide", "maximum", "arctan2", "less", "floor_divide"]
SCALAR = st.one_of(st.floats(-1e3, 1e3), st.integers(-50, 50), st.booleans(),
                   st.floats(-1e3, 1e3).map(numpy.float64), st.floats(-1e3, 1e3, width=32).map(numpy.float32),
                   st.integers(-50, 50).map(numpy.int64))


def _same(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(got)
    else:
        assert numpy.array_equal(got, want, equal_nan=True)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(UNARY + BINARY), SCALAR, SCALAR)
def test_a_ufunc_of_scalars_is_numpys(name, x, y):
    args = (x,) if name in UNARY else (x, y)
    with numpy.errstate(all="ignore"):
        try:
            want = getattr(numpy, name)(*args)
        except Exception as e:              # noqa: BLE001  (NumPy's error, the same one)
            try:
                getattr(lazy, name)(*args)
            except type(e):
                return
            raise AssertionError(f"NumPy raised {e!r}, lazy did not") from None
        _same(getattr(lazy, name)(*args), want)


def test_power_of_python_floats_is_numpys_float64():
    got = lazy.power(2.0, 3.0)
    assert type(got) is numpy.float64 and got == 8.0


OPERAND = st.one_of(st.sampled_from(["a", "b", "c"]), st.floats(-5, 5), st.integers(-5, 5),
                    st.floats(-5, 5, width=32).map(numpy.float32))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), OPERAND, OPERAND, st.booleans())
def test_where_of_small_operands_is_numpys(seed, x, y, lazy_cond):
    """``np.where`` of small computed operands (NumPy's call at once): NumPy's values and dtype."""
    rng = numpy.random.default_rng(seed)
    arrays = {"a": rng.standard_normal(6), "b": rng.standard_normal(6).astype(numpy.float32),
              "c": rng.integers(-3, 3, 6)}
    cond = rng.random(6) < 0.5
    want = numpy.where(cond, arrays.get(x, x) if isinstance(x, str) else x,
                       arrays.get(y, y) if isinstance(y, str) else y)
    lz = {k: lazy.asarray(v) for k, v in arrays.items()}
    got = lazy.where(lazy.asarray(cond) if lazy_cond else cond, lz[x] if isinstance(x, str) else x,
                     lz[y] if isinstance(y, str) else y)
    got = numpy.asarray(got.numpy() if isinstance(got, lazy.LazyArray) else got)
    assert got.dtype == want.dtype and got.shape == want.shape
    numpy.testing.assert_array_equal(got, want)
