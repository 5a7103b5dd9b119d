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
            raise AssertionError(f"NumPy raised {e!r}, lazy did not")
        _same(getattr(lazy, name)(*args), want)


def test_power_of_python_floats_is_numpys_float64():
    got = lazy.power(2.0, 3.0)
    assert type(got) is numpy.float64 and got == 8.0
