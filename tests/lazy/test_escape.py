"""Values that leave the lazy world behave as NumPy's (issue 26, items 2, 3, 4 and 10).

Pickling and copying see the computed values; NumPy functions that write into an
argument write into the lazy array's memory and the lazy array sees it; read-only
arrays raise NumPy's errors at the line; dtypes the kernels do not compile and Python's
own protocols give NumPy's results. Each test compares with plain NumPy.
"""
import copy
import json
import multiprocessing
import pickle
import sys
import warnings

import numpy
import pytest

import flamefuse.lazy as lazy

N = 100_000         # above eager_below: operations are recorded, not run at once


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        yield


def _pending(k):
    """``arange(N) * k`` still pending (recorded, not run) and NumPy's value."""
    x = lazy.arange(float(N)) * k
    assert lazy.RECORDER.ops, "the product should be pending"
    return x, numpy.arange(float(N)) * k


# -- item 2: pickling and copying ---------------------------------------------------------

@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_of_a_pending_array_is_numpys_array(protocol):
    x, want = _pending(9)
    got = pickle.loads(pickle.dumps(x, protocol=protocol))
    assert type(got) is numpy.ndarray
    numpy.testing.assert_array_equal(got, want)


def test_pickle_of_a_view_and_of_a_reduction():
    x, want = _pending(3)
    got = pickle.loads(pickle.dumps(x[::-7]))
    numpy.testing.assert_array_equal(got, want[::-7])
    s, ws = (x * 2).sum(), (want * 2).sum()
    got = pickle.loads(pickle.dumps(s))
    assert type(got) is type(ws) and got == ws


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_copies_of_pending_arrays_have_the_values_and_are_independent(how):
    x, want = _pending(10)
    y = how(x)
    x += 1                      # the copy must not see it
    numpy.testing.assert_array_equal(numpy.asarray(y), want)
    numpy.testing.assert_array_equal(numpy.asarray(x), want + 1)
    nested = how({"a": [x * 2]})
    numpy.testing.assert_array_equal(numpy.asarray(nested["a"][0]), (want + 1) * 2)


def test_pool_map_and_queue_get_the_values():
    ctx = multiprocessing.get_context("fork")
    x, want = _pending(2)
    with ctx.Pool(1) as pool:
        got = pool.map(numpy.sum, [x * 2, x])
    assert got == [(want * 2).sum(), want.sum()]
    q = ctx.Queue()
    y, want5 = _pending(5)
    q.put(y)
    got = q.get(timeout=60)
    numpy.testing.assert_array_equal(got, want5)


# -- item 3: NumPy functions that write into their argument ------------------------------

def test_generator_shuffle_permuted_write_into_the_lazy_array():
    a, want = _pending(1)
    lazy.random.default_rng(7).shuffle(a)
    numpy.random.default_rng(7).shuffle(want)
    numpy.testing.assert_array_equal(numpy.asarray(a), want)
    b, wb = _pending(2)
    lazy.random.default_rng(3).permuted(b, out=b)
    numpy.random.default_rng(3).permuted(wb, out=wb)
    numpy.testing.assert_array_equal(numpy.asarray(b), wb)
    m, wm = lazy.arange(float(N)).reshape(1000, 100) + 0, numpy.arange(float(N)).reshape(1000, 100)
    lazy.random.default_rng(5).shuffle(m)           # rows of a 2-D array
    numpy.random.default_rng(5).shuffle(wm)
    numpy.testing.assert_array_equal(numpy.asarray(m), wm)


def test_legacy_shuffle_and_numpys_own_generator_on_a_lazy_array():
    a, want = _pending(1)
    lazy.random.seed(4)
    lazy.random.shuffle(a)
    numpy.random.seed(4)
    numpy.random.shuffle(want)
    numpy.testing.assert_array_equal(numpy.asarray(a), want)
    # NumPy's own generator (code that imports the real NumPy) takes the lazy array as a
    # sequence: element reads are copies, so the swaps keep every value
    b = lazy.arange(2000.0) * 1
    numpy.random.default_rng(1).shuffle(b)
    wb = numpy.arange(2000.0)
    numpy.random.default_rng(1).shuffle(wb)
    numpy.testing.assert_array_equal(numpy.asarray(b), wb)


def test_an_element_is_numpys_scalar_a_copy():
    a, want = _pending(1)
    t, wt = a[3], want[3]
    a[3] = 7.0
    want[3] = 7.0
    assert type(t) is type(wt) and t == wt
    m = lazy.arange(12.0).reshape(3, 4) * 1
    e = m[1, 2]
    m[1, 2] = -1
    assert type(e) is numpy.float64 and e == 6.0
    assert float(m[1][2]) == -1.0          # a row is a view


def test_numpy_results_that_are_views_stay_views():
    a, want = _pending(1)
    v = lazy.flip(a)
    sq = lazy.squeeze(a.reshape(1, N))
    a += 1                              # pending, after the views were made
    want += 1
    numpy.testing.assert_array_equal(numpy.asarray(v), want[::-1])
    numpy.testing.assert_array_equal(numpy.asarray(sq), want)
    v[0] = -5                           # a write through the view reaches a
    assert float(a[-1]) == -5.0


def test_writes_through_asarray_are_seen():
    a, want = _pending(1)
    n = numpy.asarray(a)
    n[:10] = -1
    want[:10] = -1
    assert float((a * 2).sum()) == (want * 2).sum()
    out = lazy.arange(float(N)) * 0
    numpy.cumsum(numpy.asarray(a), out=numpy.asarray(out))
    numpy.testing.assert_array_equal(numpy.asarray(out + 1), numpy.cumsum(want) + 1)


# -- item 4: read-only arrays ---------------------------------------------------------------

def _raises_like_numpy(action, lazy_array, numpy_array):
    with pytest.raises(ValueError) as want:
        action(numpy_array)
    with pytest.raises(ValueError) as got:
        action(lazy_array)
    assert str(got.value) == str(want.value)


def _iadd(a):
    a += 1


def _set0(a):
    a[0] = 99


def test_setflags_write_false_raises_at_the_line():
    c, want = _pending(2)
    c.setflags(write=False)
    want.setflags(write=False)
    assert not c.flags.writeable
    for action in (_set0, _iadd, lambda a: a.fill(3), lambda a: lazy.add(a, 1, out=a)
                   if isinstance(a, lazy.LazyArray) else numpy.add(a, 1, out=a),
                   lambda a: a[1:].__setitem__(0, 5), lambda a: a[::-1].__iadd__(1)):
        _raises_like_numpy(action, c, want)
    numpy.testing.assert_array_equal(numpy.asarray(c), want)
    d = c * 1                            # a new array is writable again
    d[0] = 99
    assert float(d[0]) == 99.0


def test_flags_writeable_false_and_read_only_numpy_input():
    c = lazy.arange(float(N)) * 1
    c.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        c[5] = 1
    r = numpy.arange(float(N))
    r.flags.writeable = False
    x = lazy.asarray(r)
    numpy.testing.assert_array_equal(numpy.asarray(x * 2 + 1), r * 2 + 1)
    with pytest.raises(ValueError, match="read-only"):
        x += 1


def test_broadcast_to_and_diagonal_are_read_only():
    a = lazy.arange(float(N)) * 1
    b, wb = lazy.broadcast_to(a, (2, N)), numpy.broadcast_to(numpy.arange(float(N)), (2, N))
    _raises_like_numpy(lambda z: z.__setitem__((0, 0), 99), b, wb)
    _raises_like_numpy(_iadd, b, wb)
    m = lazy.arange(float(N)).reshape(250, 400) * 1
    wm = numpy.arange(float(N)).reshape(250, 400)
    _raises_like_numpy(_set0, lazy.diagonal(m), numpy.diagonal(wm))
    numpy.testing.assert_array_equal(numpy.asarray(b), wb)


# -- item 10: dtypes and Python's protocols -----------------------------------------------

DTYPES = ["float16", "longdouble", "complex256", "object", "datetime64[s]", "timedelta64[s]",
          "U5", "S5"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_unsupported_dtypes_run_as_numpy(dtype):
    if dtype == "complex256" and not hasattr(numpy, "complex256"):
        pytest.skip("no complex256 here")
    ints = numpy.arange(N) % 97
    want = ints.astype(dtype)
    got = lazy.asarray(ints).astype(dtype)
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    assert got.dtype == want.dtype
    z = lazy.zeros(N, dtype=dtype)
    assert numpy.asarray(z).dtype == numpy.zeros(N, dtype=dtype).dtype
    if want.dtype.kind in "fcmO":
        g2, w2 = got + got, want + want
        numpy.testing.assert_array_equal(numpy.asarray(g2), w2)
        assert numpy.asarray(g2).dtype == w2.dtype
        gs, ws = got.sum(), want.sum()
        gs = gs.numpy()[()] if isinstance(gs, lazy.LazyArray) else gs
        assert type(gs) is type(ws) and gs == ws
    if want.dtype.kind in "fc":
        numpy.testing.assert_array_equal(numpy.asarray(lazy.sqrt(got)), numpy.sqrt(want))
        gm = (got * 2).max() if want.dtype.kind == "f" else (got * 2).sum()
        assert gm == ((want * 2).max() if want.dtype.kind == "f" else (want * 2).sum())
    if want.dtype.kind == "M":
        numpy.testing.assert_array_equal(numpy.asarray(got - got[0]), want - want[0])
    want = want.copy()
    sel, wsel = got[got > got[3]], want[want > want[3]]
    numpy.testing.assert_array_equal(numpy.asarray(sel), wsel)
    got[got > got[3]] = got[0]
    want[want > want[3]] = want[0]
    got[::2] = got[1::2]
    want[::2] = want[1::2]
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    numpy.testing.assert_array_equal(numpy.asarray(lazy.where(got == got[0], got, got[1])),
                                     numpy.where(want == want[0], want, want[1]))
    assert repr(got[:3]) == repr(want[:3])


def test_float16_mixed_with_fused_dtypes():
    h = numpy.linspace(0, 1, N).astype(numpy.float16)
    got = lazy.asarray(h) * numpy.float16(3) + 1
    numpy.testing.assert_array_equal(numpy.asarray(got), h * numpy.float16(3) + 1)
    i8 = numpy.arange(N).astype(numpy.int8)
    got = lazy.sqrt(lazy.asarray(i8))                  # int8 -> float16 in NumPy
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.sqrt(i8))
    assert got.dtype == numpy.float16


def test_repr_and_str_are_numpys():
    x, want = _pending(1)
    assert repr(x) == repr(want) and str(x) == str(want)
    s, ws = x.sum(), want.sum()
    assert repr(s) == repr(ws) and str(s) == str(ws)


def test_reductions_as_python_values():
    x, want = _pending(0.5)
    s, ws = x.sum(), want.sum()
    assert round(s) == round(ws) and type(round(s)) is type(round(ws))
    assert round(s, 1) == round(ws, 1)
    assert json.dumps(s) == json.dumps(ws)
    assert json.dumps({"total": x.max()}) == json.dumps({"total": want.max()})
    with pytest.raises(TypeError):
        json.dumps(numpy.arange(N).sum())
    with pytest.raises(TypeError):
        json.dumps((lazy.arange(N) * 1).sum())
    d = {s: "a"}
    assert d[ws] == "a" and hash(s) == hash(ws)
    with pytest.raises(TypeError):
        hash(x)
    t = s                                   # NumPy's scalar: += binds a new value
    s += 1
    assert t == ws and s == ws + 1
    small = lazy.arange(10.0).sum()         # run at once: NumPy's own scalar
    assert type(small) is numpy.float64


def test_scipy_random_state_takes_a_lazy_generator():
    stats = pytest.importorskip("scipy.stats")
    got = stats.norm.rvs(size=5, random_state=lazy.random.default_rng(1))
    want = stats.norm.rvs(size=5, random_state=numpy.random.default_rng(1))
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    assert isinstance(lazy.random.default_rng(1), numpy.random.Generator)


def test_tofile_and_tobytes(tmp_path):
    x, want = _pending(3)
    x.tofile(tmp_path / "x.bin")
    numpy.testing.assert_array_equal(numpy.fromfile(tmp_path / "x.bin"), want)
    assert x.tobytes() == want.tobytes()


def test_buffer_protocol():
    """memoryview, struct, file.write and hashlib read the computed values (before Python 3.12
    through the type slot that flamefuse.lazy.buffer_slot fills)."""
    import hashlib
    import io
    import struct
    x, want = _pending(3)
    assert bytes(memoryview(x)) == want.tobytes()
    assert struct.unpack_from("d", x, 8) == struct.unpack_from("d", want, 8)
    f = io.BytesIO()
    assert f.write(x) == want.nbytes
    assert f.getvalue() == want.tobytes()
    y, wy = _pending(5)
    assert hashlib.sha256(y).hexdigest() == hashlib.sha256(wy).hexdigest()
    m = memoryview(x)
    assert (m.format, m.shape, m.readonly) == ("d", (N,), False)


def test_writes_through_a_memoryview_are_seen_in_order():
    x, want = _pending(2)
    m = memoryview(x)
    m[0] = -1.0                             # NumPy's memory, written by code outside flamefuse
    want[0] = -1.0
    y, wy = x + 1, want + 1                 # runs at once while m lives, sees the write
    m[1] = -2.0
    want[1] = -2.0
    numpy.testing.assert_array_equal(numpy.asarray(y), wy)
    numpy.testing.assert_array_equal(numpy.asarray(x), want)
    del m


def test_a_buffer_request_numpy_refuses_stops_at_the_line():
    """A contiguous request on a strided view: NumPy raises ValueError; before Python 3.12 the
    slot cannot pass an exception on, so Python raises SystemError at the same line."""
    import io
    x, want = _pending(3)
    with pytest.raises(ValueError):
        io.BytesIO().write(want[::-2])
    expected = ValueError if sys.version_info >= (3, 12) else (ValueError, SystemError)
    with pytest.raises(expected):
        io.BytesIO().write(x[::-2])
    ro = x[:10]
    ro.setflags(write=False)
    assert bytes(memoryview(ro)) == want[:10].tobytes()


def test_the_slot_is_filled_only_where_the_layout_checks():
    from flamefuse.lazy import buffer_slot

    class Plain:
        pass

    assert buffer_slot.install(Plain, lambda o: numpy.arange(3.0)) == buffer_slot.needed()
    if buffer_slot.needed():
        assert bytes(memoryview(Plain())) == numpy.arange(3.0).tobytes()
        assert not buffer_slot.install(Plain, lambda o: numpy.arange(3.0)), "filled once"
        assert not buffer_slot.install(bytes, lambda o: numpy.arange(3.0)), "not a heap type"


def test_an_exported_array_sees_writes_in_numpys_order():
    x, want = _pending(1)
    n, wn = numpy.asarray(x), want          # code outside flamefuse keeps NumPy's array
    y, wy = x * 2, want * 2                 # runs at once while n lives
    n[0] = -5.0
    wn[0] = -5.0
    x += 1                                  # seen through n at once
    want += 1
    numpy.testing.assert_array_equal(n, want)
    numpy.testing.assert_array_equal(numpy.asarray(y), wy)
    del n
    z = x * 3                               # no NumPy view left: recorded again
    assert lazy.RECORDER.ops
    numpy.testing.assert_array_equal(numpy.asarray(z), want * 3)


def test_bytes_are_the_buffers():
    x = lazy.arange(N) % 3 + 1
    want = numpy.arange(N) % 3 + 1
    assert bytes(x) == bytes(want)
    assert bytes(x[::-2]) == bytes(want[::-2])


def test_a_selection_pickles_and_copies_its_values():
    x, want = _pending(1)
    s, ws = x[x > 50_000], want[want > 50_000]
    numpy.testing.assert_array_equal(pickle.loads(pickle.dumps(s)), ws)
    c = copy.deepcopy(x[x < 10])
    x[:] = 0
    numpy.testing.assert_array_equal(numpy.asarray(c), numpy.arange(10.0))


def test_out_of_a_numpy_function_is_the_lazy_array():
    a, want = _pending(1)
    b, wb = lazy.arange(float(N)) * 0, numpy.zeros(N)
    r, wr = lazy.cumsum(a, out=b), numpy.cumsum(want, out=wb)
    b += 1                              # r is b: it sees the update, in order
    wb += 1
    numpy.testing.assert_array_equal(numpy.asarray(r), wr)
    c, wc = lazy.arange(float(N)) * 0, numpy.zeros(N)
    lazy.copyto(c, a[::-1])
    numpy.copyto(wc, want[::-1])
    numpy.testing.assert_array_equal(numpy.asarray(c * 2), wc * 2)


def test_a_scalar_result_plus_an_array_is_an_array():
    x, want = _pending(1)
    s, ws = x.sum(), want.sum()
    s += x[:5]
    ws += want[:5]
    numpy.testing.assert_array_equal(numpy.asarray(s), ws)
    s[0] = 1.0                  # an array now: writable, as NumPy's
    assert float(s[0]) == 1.0


SIGNATURES = {
    "where one argument": lambda m, v: m.where(v > N - 10)[0],
    "clip out": lambda m, v: m.clip(v, 0, 5, out=m.zeros(N)),
    "clip max=": lambda m, v: m.clip(v, max=5),
    "zeros_like shape=": lambda m, v: m.zeros_like(v, shape=(3,)),
    "ones_like order=": lambda m, v: m.ones_like(v, order="C"),
    "empty_like shape=": lambda m, v: m.empty_like(v, shape=(2, 5)).shape,
    "copy order=": lambda m, v: m.copy(v, order="F"),
    "size axis": lambda m, v: m.size(v.reshape(100, 1000), 1),
    "outer out": lambda m, v: m.outer(v[:3], v[:3], out=m.zeros((3, 3))),
    "dot out": lambda m, v: m.dot(v[:6].reshape(2, 3), v[:3], out=m.zeros(2)),
    "asarray order=": lambda m, v: m.asarray(v, order="F"),
    "array ndmin": lambda m, v: m.array(v[:3], ndmin=2),
    "zeros order=": lambda m, v: m.zeros((2, 3), order="F"),
    "full order=": lambda m, v: m.full((2, 3), 7.0, order="F"),
    "divmod": lambda m, v: divmod(v, 7)[1],
    "rdivmod": lambda m, v: divmod(7.5, v[1:])[0],
    "isscalar of a sum": lambda m, v: m.isscalar((v * 2).sum()),
    "round of a sum": lambda m, v: type(m.round((v * 2).sum(), 2)),
    "method of a sum": lambda m, v: type((v * 2).sum().round(2)),
}


@pytest.mark.parametrize("name", SIGNATURES)
def test_numpys_signatures_and_python_operators(name):
    form = SIGNATURES[name]
    want = form(numpy, numpy.arange(float(N)))
    got = form(lazy, lazy.arange(float(N)) * 1)
    if isinstance(want, numpy.ndarray):
        numpy.testing.assert_array_equal(numpy.asarray(got), want, strict=True)
    else:
        assert got == want


def test_a_scalar_result_as_an_index():
    x, want = _pending(1)
    k, wk = (lazy.arange(N) % 7).sum() % N, (numpy.arange(N) % 7).sum() % N
    assert type(x[k]) is type(want[wk]) and x[k] == want[wk]
    x[k] = -1.0
    want[wk] = -1.0
    numpy.testing.assert_array_equal(numpy.asarray(x), want)
    with pytest.raises(IndexError):
        want[want.sum()]
    with pytest.raises(IndexError):
        x[x.sum()]


@pytest.mark.parametrize("make", [lambda m: m.random.Generator(m.random.PCG64(2)),
                                  lambda m: m.random.RandomState(2),
                                  lambda m: m.random.default_rng(2)],
                         ids=["Generator", "RandomState", "default_rng"])
def test_shuffle_of_rows_with_every_generator(make):
    a = lazy.arange(float(N)).reshape(1000, 100) * 1
    want = numpy.arange(float(N)).reshape(1000, 100)
    make(lazy).shuffle(a)
    make(numpy).shuffle(want)
    numpy.testing.assert_array_equal(numpy.asarray(a), want)
    r = make(lazy)
    assert isinstance(r, type(make(numpy))) and type(pickle.loads(pickle.dumps(r))) is type(make(numpy))
    numpy.testing.assert_array_equal(numpy.asarray(r.standard_normal(5)), make(numpy).standard_normal(5))


def test_an_error_in_the_slot_is_printed_with_its_traceback_and_kept(capfd):
    """The slot's error paths print the error (``traceback``, imported there only) and fail the
    call; an error computing the values is kept for ``__array__`` (flamefuse.lazy.buffer_slot)."""
    from flamefuse.lazy import buffer_slot
    if not buffer_slot.needed():
        pytest.skip("Python 3.12 and later export buffers through __buffer__")

    class Failing:
        pass

    def values(obj):
        raise ArithmeticError("pending values failed")

    class Strided:
        pass

    every_other = numpy.arange(8.0)[::2]
    assert buffer_slot.install(Failing, values) and buffer_slot.install(Strided, lambda o: every_other)
    f = Failing()
    with pytest.raises(SystemError):
        memoryview(f)
    err = capfd.readouterr().err
    assert "Traceback" in err and "ArithmeticError: pending values failed" in err, err
    kept = buffer_slot.failure(f)
    assert isinstance(kept, ArithmeticError) and buffer_slot.failure(f) is None
    import io
    r = Strided()
    assert bytes(memoryview(r)) == every_other.tobytes()    # a strided request: NumPy's buffer
    with pytest.raises(SystemError):
        io.BytesIO().write(r)                               # a contiguous one: NumPy refuses
    err = capfd.readouterr().err
    assert "Traceback" in err and ("BufferError" in err or "ValueError" in err), err
    assert buffer_slot.failure(r) is None                   # NumPy's refusal is not kept
