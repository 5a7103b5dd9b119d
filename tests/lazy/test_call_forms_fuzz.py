"""Differential fuzzer of call forms: reductions and ufuncs with ``axis`` (ints, tuples, out of
range), ``keepdims``, ``where=``, ``initial=``, ``dtype=``, ``out=`` (right and wrong shapes and
dtypes), on arrays of 0-3 dimensions (empty ones too) and the kernels' dtypes, each call on
NumPy and on flamefuse.lazy (every operation recorded): the same value, dtype and shape, or the
same error type and message, and the same ``out=`` identity and contents.

The second fuzz campaign's probes of these forms found reduction axes wrapped around (a
vector's ``sum(axis=1, keepdims=True)`` returned numbers) and ``out=`` arguments not returned
themselves; this keeps the forms covered (hypothesis, a modest number of examples).
"""
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all", "std", "var", "argmax", "cumsum",
              "ptp", "count_nonzero", "nansum")
UFUNC_REDUCE = ("add", "multiply", "maximum", "minimum", "logical_or", "bitwise_xor")
UFUNCS = ("add", "subtract", "multiply", "true_divide", "floor_divide", "maximum", "less", "power",
          "negative", "sqrt", "absolute", "logical_not")
DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float32", "float64", "complex128")


pytestmark = pytest.mark.usefixtures("recording")      # tests/lazy/conftest.py


def _outcome(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f()
        except Exception as ex:  # noqa: BLE001  (the error is the result compared)
            return ("error", type(ex).__name__, str(ex))
    a = numpy.asarray(r)
    return ("value", a.dtype.str, a.shape, [repr(v) for v in a.ravel().tolist()])


def _array(mod, shape, dtype, seed):
    vals = (numpy.arange(int(numpy.prod(shape))) * (seed % 7 + 3) + seed) % 11 - 4
    base = vals.reshape(shape).astype(dtype)
    return mod.asarray(base) * 1 if dtype != "bool" else mod.asarray(base) & True


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
axes = st.one_of(st.none(), st.integers(-4, 3), st.lists(st.integers(-4, 3), min_size=1, max_size=3).map(tuple))


def _out_for(mod, kind, shape, dtype):
    if kind == "none":
        return None
    if kind == "wrong":
        return mod.zeros(tuple(n + 1 for n in shape) or (2,), dtype)
    return mod.zeros(shape, "float64" if kind == "float" else dtype)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=shapes, dtype=st.sampled_from(DTYPES), name=st.sampled_from(REDUCTIONS + UFUNC_REDUCE),
       axis=axes, keepdims=st.booleans(), where=st.booleans(), initial=st.sampled_from([None, 0, 5]),
       out=st.sampled_from(["none", "same", "float", "wrong"]), seed=st.integers(0, 20))
def test_reduction_forms_are_numpys(shape, dtype, name, axis, keepdims, where, initial, out, seed):
    def run(mod):
        a = _array(mod, shape, dtype, seed)
        kw = {"axis": axis}
        if keepdims:
            kw["keepdims"] = True
        if where and name in ("sum", "prod", "max", "min", "mean", "any", "all") + UFUNC_REDUCE:
            kw["where"] = _array(mod, shape, "int64", seed + 1) > 0
        if initial is not None and name in ("sum", "prod", "max", "min") + UFUNC_REDUCE:
            kw["initial"] = initial
        fn = getattr(mod, name).reduce if name in UFUNC_REDUCE else getattr(mod, name)
        if name in UFUNC_REDUCE and axis is None:
            kw["axis"] = 0
        holder = {}

        def call():
            if out != "none":
                want_shape = numpy.asarray(getattr(numpy, name).reduce(numpy.zeros(shape, dtype), **{
                    k: v for k, v in kw.items() if k in ("axis", "keepdims")}) if name in UFUNC_REDUCE
                    else getattr(numpy, name)(numpy.zeros(shape, dtype), **{
                        k: v for k, v in kw.items() if k in ("axis", "keepdims")})).shape
                holder["out"] = _out_for(mod, out, want_shape, dtype)
                kw["out"] = holder["out"]
            r = fn(a, **kw)
            return (r is holder.get("out"), r)
        res = _outcome(lambda: call()[1])
        same = _outcome(lambda: call()[0]) if out != "none" else None
        if res[0] == "error":       # (what a failed call left in out= is not specified)
            return res, same
        return res, same, None if "out" not in holder else _outcome(lambda: holder["out"])
    assert run(lazy) == run(numpy)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=shapes, shape2=shapes, dtype=st.sampled_from(DTYPES), dtype2=st.sampled_from(DTYPES),
       name=st.sampled_from(UFUNCS), where=st.booleans(), out=st.sampled_from(["none", "same", "float", "wrong"]),
       scalar=st.sampled_from([None, 2, -1, 0.5, 300, True]), seed=st.integers(0, 20))
def test_ufunc_forms_are_numpys(shape, shape2, dtype, dtype2, name, where, out, scalar, seed):
    # NumPy 2.4's own comparison of an integer array with a Python int it cannot hold under
    # where= crashes the interpreter (``np.less(uint8_array, 300, where=m)``: a segmentation
    # fault in NumPy, with or without flamefuse): not a form to call here
    assume(not (where and name == "less" and type(scalar) is int and dtype != "bool"))

    def run(mod):
        a = _array(mod, shape, dtype, seed)
        uf = getattr(mod, name)
        nin = getattr(numpy, name).nin
        args = (a,) if nin == 1 else (a, scalar if scalar is not None else _array(mod, shape2, dtype2, seed + 2))
        kw = {}
        holder = {}

        def call():
            if where:
                kw["where"] = _array(mod, shape, "int64", seed + 1) > 0
            if out != "none":
                holder["out"] = _out_for(mod, out, shape, dtype)
                kw["out"] = holder["out"]
            r = uf(*args, **kw)
            return r is holder.get("out") if out != "none" else r
        res = _outcome(call)
        if out == "none" and where:
            res = res[:3]           # where= without out=: NumPy's values are uninitialised memory
        if res[0] == "error":       # (what a failed call left in out= is not specified)
            return res
        return res, None if "out" not in holder else _outcome(lambda: holder["out"])
    assert run(lazy) == run(numpy)
