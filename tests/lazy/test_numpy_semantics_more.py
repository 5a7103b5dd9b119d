"""NumPy's results, errors and warnings in the corners the second fuzz campaign found wrong.

Each test failed before its fix; the programs p21-p28 of tests/data/programs/ (ufunc methods
and ``out=``, integer division and promotion, writes through ``copyto``/``put``/fancy
indices, ``einsum`` and rounding, 0-d arrays and scalars, structured/object/string arrays,
copies and printing, script globals, threads and caught errors) and a probe of ~170 one-line
expressions against NumPy found them:

* ``flamefuse fuse``'s own ``FallbackWarning`` reached the script's ``catch_warnings`` lists
  and, under ``-W error`` / ``simplefilter("error")``, stopped the script; an unclosed
  ``os.scandir`` added a ``ResourceWarning``;
* a NumPy call with a lazy ``out=`` (``np.add.reduce(x, out=o)``, ``np.cumsum(x, out=o)``,
  ``x.round(1, out=o)``) returned a new wrapper, not ``o`` itself;
* ``np.clip(uint8_array, -1, 300)`` raised OverflowError (NumPy clips);
  ``np.where(c, "a", "bb")`` read "bb" as a dtype's name, ``np.where(c, x, None)`` gave NaN;
* a structured array's field ``pts["x"]`` was a copy (``pts["x"] *= 2`` lost), and a
  record written as a tuple (``v[1] = (7, (8.0, 9.0))``) raised;
* ``iter()`` of a 0-d array did not raise; ``np.zeros(2.5)`` made an array, ``np.zeros((2, -1))``
  raised a broadcast error; ``a.transpose(1)`` of a matrix returned a row;
* ``x.sum(axis=1, keepdims=True)`` of a vector and ``np.diff(a, axis=2)`` of a matrix wrapped the
  axis around and returned numbers (NumPy: AxisError);
* index, product (``@``, ``np.dot``) and ``clip`` shape errors had messages of their own;
* ``x == "abc"`` raised (NumPy's operator answers all False); ``bool_array ** 2`` was int64
  (NumPy's operator squares: int8), ``b **= 2``'s error could not be printed, ``b += 2**63``
  raised a casting error instead of OverflowError;
* ``3.0 in matrix`` raised (rows compared); ``s.hex()`` of a reduction raised;
  ``x.flags.writeable = False`` left a pending array writable; ``x.__array_interface__``
  (``PIL.Image.fromarray``) raised;
* tests/lazy/test_call_forms_fuzz.py: ``np.sum(zero_d, axis=0)`` raised, a recorded ``x ** 2``'s
  and a wrong ``out=``'s broadcast errors differed; and a small computed operation with a wrong
  ``out=`` gave an assignment's error.
"""
import warnings

import numpy
import pytest

import flamefuse.lazy as lazy


pytestmark = pytest.mark.usefixtures("recording")     # tests/lazy/conftest.py


def _outcome(f):
    try:
        r = f()
    except Exception as ex:  # noqa: BLE001  (the error is the result compared)
        return (type(ex).__name__, str(ex))
    if isinstance(r, (str, bool, int, type(None))):
        return ("python", r)
    a = numpy.asarray(r)
    return ("value", a.dtype.str, a.shape, a.tolist())


def _same(calls, setup):
    """Every call gives NumPy's outcome (value, dtype and shape, or error type and message)."""
    for k, call in enumerate(calls):
        got = _outcome(lambda: call(lazy, *setup(lazy)))
        want = _outcome(lambda: call(numpy, *setup(numpy)))
        assert got == want, (k, got, want)


FALLBACK_SCRIPT = """\
import warnings
import numpy as np
warnings.simplefilter("error")
M = np.arange(1000.0).reshape(100, 10)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    m = np.mean(M, axis=1, where=M > 3)
print(sorted(str(w.message) for w in ws), float(m[0]))
"""


def test_fuse_gives_the_script_numpys_warnings_only(tmp_path, capsys, monkeypatch):
    """``flamefuse fuse``: a fallback (``mean`` with ``where=``) adds no warning to the script's
    ``catch_warnings`` list and does not stop a script that turned warnings into errors."""
    from flamefuse.cli import main
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "s.py"
    script.write_text(FALLBACK_SCRIPT)
    status = main(["fuse", "--no-adapt", str(script)])
    out, err = capsys.readouterr()
    with pytest.warns(lazy.FallbackWarning):        # in-process flamefuse.lazy warns again after
        lazy.mean(lazy.arange(40.0).reshape(4, 10) * 1, axis=1, where=lazy.arange(40).reshape(4, 10) > 3)
    assert status == 0, err
    assert out.strip() == "[] 6.5"
    assert "fallbacks 1" in err and "mean: 1" in err      # the summary names the fallback


def test_reading_a_librarys_version_leaves_no_resource_warning():
    from flamefuse import identity
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        identity.library.__wrapped__("numpy")
    assert [str(w.message) for w in ws] == []


def test_a_numpy_call_returns_its_lazy_out_argument_itself():
    def run(mod):
        x = mod.linspace(0.0, 1.0, 50) * 2
        m = x.reshape(5, 10) * 1
        o0, o1, o2, o3 = mod.empty(()), mod.empty(50), mod.empty(50), mod.zeros(10)
        o4, o5, o6 = mod.empty(50), mod.empty(50), mod.empty(10)
        return [mod.add.reduce(x, out=o0) is o0, mod.cumsum(x, out=o1) is o1,
                mod.multiply.accumulate(x, out=o2) is o2, mod.mean(m, axis=0, out=o3) is o3,
                x.cumsum(out=o4) is o4, x.round(1, out=o5) is o5, m.std(axis=0, out=o6) is o6,
                numpy.asarray(o0).tolist(), numpy.asarray(o3).tolist()]
    got, want = run(lazy), run(numpy)
    assert got[:7] == want[:7] == [True] * 7
    for g, w in zip(got[7:], want[7:]):
        numpy.testing.assert_allclose(g, w, rtol=1e-14)


def test_clip_with_python_int_bounds_an_integer_dtype_cannot_hold():
    _same([lambda m, u: m.clip(u, -1, 300), lambda m, u: m.clip(u, 3, 300),
           lambda m, u: m.clip(u, 300, 400), lambda m, u: m.clip(u, -1, 5)],
          lambda m: ((m.arange(50) % 7).astype(m.uint8) * 1,))


def test_where_with_strings_and_none():
    _same([lambda m, c, x: m.where(c, "a", "bb"), lambda m, c, x: m.where(c, "f8", "i4"),
           lambda m, c, x: m.where(c, x, None).tolist(), lambda m, c, x: m.where(c, x, "s")],
          lambda m: (m.linspace(0, 1, 20) * 1 > 0.5, m.linspace(0, 1, 20) * 1))


def test_fields_of_a_structured_array_are_views():
    def run(mod):
        pts = mod.zeros(40, dtype=[("name", "U8"), ("x", "f8"), ("y", "f4")])
        pts["x"] = mod.linspace(0, 1, 40)
        xs = pts["x"]
        xs *= 2
        pts["y"] += 1.5
        pts["name"] = mod.where(mod.arange(40) % 2 == 0, "even", "odd")
        v = mod.zeros(3, dtype=[("a", "i4"), ("b", "f8", (2,))])
        v["b"][:, 1] = [1.5, 2.5, 3.5]
        v[1] = (7, (8.0, 9.0))
        return [numpy.asarray(pts).tobytes(), numpy.asarray(v).tobytes()]
    assert run(lazy) == run(numpy)


def test_iterating_a_0d_array_raises_at_iter():
    for mod in (numpy, lazy):
        with pytest.raises(TypeError, match="iteration over a 0-d array"):
            iter(mod.array(3.0))
        with pytest.raises(TypeError, match="iteration over a 0-d array"):
            iter(mod.full((), 2.0))
        with pytest.raises(TypeError, match="'numpy.float64' object is not iterable"):
            iter(mod.arange(3.0).sum())


def test_creation_shape_errors():
    _same([lambda m: m.zeros(2.5), lambda m: m.zeros((2, -1)), lambda m: m.empty(-1),
           lambda m: m.ones((2, 3.0)), lambda m: m.full((2, -3), 1.0), lambda m: m.zeros(numpy.int64(3)),
           lambda m: m.zeros([2, 3])], lambda m: ())


def test_transpose_axes_are_checked():
    _same([lambda m, a: a.transpose(1), lambda m, a: a.transpose(0, 0), lambda m, a: a.transpose(0, 2),
           lambda m, a: m.transpose(a, (1, 0, 2)), lambda m, a: a.transpose(-1, 0) + 0,
           lambda m, a: a.transpose((1, 0)) * 1, lambda m, a: a.reshape(2, 3, 4).transpose(2, -3, 1) * 1],
          lambda m: (m.arange(24.0).reshape(4, 6) * 1,))


def test_axes_out_of_range_raise_numpys_axis_error():
    """An axis out of range was wrapped around: a vector's ``sum(axis=1, keepdims=True)`` and a
    matrix's ``diff(axis=2)`` returned numbers."""
    _same([lambda m, x, a: x.sum(axis=1, keepdims=True), lambda m, x, a: a.max(axis=(0, 2)),
           lambda m, x, a: a.mean(axis=(1, -3)), lambda m, x, a: m.diff(a, axis=2),
           lambda m, x, a: m.diff(a, axis=-3), lambda m, x, a: a.sum(axis=(1, 1)),
           lambda m, x, a: m.diff(a, axis=-2) * 1, lambda m, x, a: a.sum(axis=(1, -2), keepdims=True)],
          lambda m: (m.arange(6.0) * 1, m.arange(24.0).reshape(4, 6) * 1))


def test_index_and_shape_error_messages_are_numpys():
    _same([lambda m, a, x: a[1, 2, 3], lambda m, a, x: a[..., ...], lambda m, a, x: a @ a,
           lambda m, a, x: m.dot(a, x[:5]), lambda m, a, x: m.dot(x, x[:3]), lambda m, a, x: a @ x[:4],
           lambda m, a, x: x[:3] @ a, lambda m, a, x: m.clip(x, [0, 1], 2)],
          lambda m: (m.arange(24.0).reshape(4, 6) * 1, m.linspace(-1, 1, 30) * 1))


def test_comparing_with_a_string_or_none_is_numpys_operator():
    _same([lambda m, x: x == "abc", lambda m, x: x != "abc", lambda m, x: x == None,  # noqa: E711
           lambda m, x: x < "a", lambda m, x: x + "a"],
          lambda m: (m.linspace(-1, 1, 30) * 1,))


def test_in_place_operator_errors_are_numpys():
    """``b **= 2`` of a bool array raised an error whose ``str()`` itself failed (the recorded
    power's stand-in function, not the ufunc, was named); ``b += 2**63`` raised a casting error
    where NumPy raises OverflowError; ``b ** 2`` was int64 (NumPy's operator squares: int8)."""
    def iop(name, other):
        import operator

        def call(m, b, u):
            target = b if name.startswith("b") else u
            getattr(operator, name[1:])(target, other)
            return target
        return call
    _same([iop("bipow", 2), iop("biadd", 2**63), iop("bimul", 2.5), iop("uiadd", -1),
           iop("uiadd", 300), iop("uipow", 3), iop("uiadd", 2**63), iop("biand", True),
           lambda m, b, u: b ** 2, lambda m, b, u: b ** 2.0, lambda m, b, u: m.power(b, 2)],
          lambda m: (m.arange(20) * 1 > 5, (m.arange(20) % 7).astype(m.uint8) * 1))


def test_membership_scalar_methods_and_generator_out():
    """``3.0 in matrix`` iterated rows and raised (an array's truth value); a reduction's
    ``s.hex()`` / ``s.is_integer()`` (NumPy's scalar methods) raised AttributeError;
    ``rng.random(out=o)`` returned a new wrapper, not ``o``."""
    def run(mod):
        m = mod.arange(12.0).reshape(3, 4) * 1
        s = m.max()
        rng = mod.random.default_rng(7)
        o = mod.zeros(6)
        r = rng.random(out=o)
        return [3.0 in m, -1.0 in m, m.__contains__(5.0), s.hex(), s.is_integer(), r is o,
                numpy.asarray(o).tolist()]
    assert run(lazy) == run(numpy)


def test_resize_in_place_of_a_computed_array():
    """``a.resize(n)`` of a computed array raised "cannot resize this array: it does not own its
    data" (its memory is a view of the recorder's buffer)."""
    def run(mod):
        out = []
        a = mod.arange(30.0) * 1
        a.resize(10, refcheck=False)
        b = mod.arange(6.0) * 2
        b.resize((2, 4))
        c = mod.asfortranarray(mod.arange(6.0).reshape(2, 3) * 1)
        c.resize(7, refcheck=False)
        d = mod.arange(6.0) * 1
        d.resize(3, 2)                  # same size: a reshape in place
        out.append(_outcome(lambda: d.resize(-1)))
        e = mod.arange(6.0) * 1
        e2 = e                                              # noqa: F841
        out.append(_outcome(lambda: e.resize(8)))           # referenced twice: refcheck's error
        v = (mod.arange(6.0) * 1)[1:]
        out.append(_outcome(lambda: v.resize(3)))           # a view: it does not own its data
        b += 1                                              # later operations see the new array
        out += [numpy.asarray(x).tolist() for x in (a, b, c, d, e)] + [b.shape, d.flags.c_contiguous]
        return out
    assert run(lazy) == run(numpy)


def test_flags_writeable_false_makes_a_pending_array_read_only():
    """``x.flags.writeable = False`` of an array still being computed left the lazy array
    writable (NumPy's flags object keeps the flags it was made with), so ``x += 1`` wrote."""
    def run(mod):
        out = []
        for setter in (lambda f: setattr(f, "writeable", False), lambda f: f.__setitem__("W", False)):
            x = mod.arange(8.0) * 1
            setter(x.flags)
            out.append(_outcome(lambda: x.__iadd__(1)))
            out.append(_outcome(lambda: x.__setitem__(0, 5.0)))
            out.append(numpy.asarray(x).tolist())
        return out
    assert run(lazy) == run(numpy)


def test_call_forms_the_fuzzer_found():
    """tests/lazy/test_call_forms_fuzz.py's findings: ``ufunc.reduce``/``sum`` take axis 0 or -1
    of a 0-d array (the recorded reduction raised AxisError); a recorded ``x ** 2`` into a wrong
    ``out=`` named two operands, not NumPy's three; a wrong ``out=`` named the inputs' broadcast
    shape, not the one the output takes part in."""
    _same([lambda m, z, a: m.add.reduce(z, axis=0), lambda m, z, a: m.sum(z, axis=-1),
           lambda m, z, a: m.max(z, axis=0), lambda m, z, a: m.sum(z, axis=(0,)),
           lambda m, z, a: m.sum(z, axis=0, keepdims=True), lambda m, z, a: m.mean(z, axis=0),
           lambda m, z, a: m.power(a, 2, out=m.zeros((3, 4))), lambda m, z, a: m.add(z, a[:0], out=m.zeros(2))],
          lambda m: (m.asarray(numpy.array(True)) & True, m.arange(6.0).reshape(2, 3) * 1))


def test_a_wrong_out_of_a_small_computed_operation_is_numpys_error():
    """Small computed operands run eagerly: a wrong ``out=`` there gave the error of an
    assignment ('could not broadcast input array from shape (3,4) into shape (3,)')."""
    lazy.configure(eager_below=1 << 15)
    _same([lambda m, a: m.add(a, a, out=m.zeros(3)), lambda m, a: m.negative(a, out=m.zeros((2, 3, 4))),
           lambda m, a: m.multiply(a, 2, out=m.zeros((1, 4))), lambda m, a: a.__iadd__(m.ones((2, 3, 4)))],
          lambda m: (m.arange(12.0).reshape(3, 4),))


def test_array_interface_of_a_pending_array():
    """``x.__array_interface__`` (read by ``PIL.Image.fromarray`` and ctypes code) raised
    AttributeError; it is NumPy's interface of the computed memory."""
    class Holder:
        def __init__(self, x):
            self.x = x                                  # keeps the memory alive
            self.__array_interface__ = x.__array_interface__

    def run(mod):
        x = (mod.arange(12).reshape(3, 4) * 5).astype(mod.uint8)
        face = x.__array_interface__
        return [face["shape"], face["typestr"], numpy.asarray(Holder(x)).tolist()]
    assert run(lazy) == run(numpy)
