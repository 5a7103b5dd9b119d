"""flamefuse.lazy behaves as NumPy for everything: a walk over NumPy's public API.

Every public ndarray attribute and method, every NumPy ufunc (calls and the
reduce/accumulate/outer/at methods) and the common ``numpy.*`` functions run on
lazy arrays and must give NumPy's result (values, dtype, shape); each either
fuses (records, no warning), runs as NumPy's own implementation (no warning)
or falls back visibly. The functions the issue names must not warn.
"""
import pickle
import warnings

import numpy
import pytest

import flamefuse.lazy as lazy

PUBLIC = sorted(m for m in dir(numpy.ndarray) if not m.startswith("_"))


@pytest.fixture(autouse=True)
def recording(monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")        # kernels as plain Python: no compile time
    lazy.configure(partitioner="greedy", eager_below=0)      # record everything
    lazy.flush()
    lazy.reset_stats()
    yield
    lazy.configure(eager_below=1 << 15)


def _pair(kind="float"):
    base = numpy.arange(12.0).reshape(3, 4) * 1.5 - 4.25
    x = base if kind == "float" else (numpy.arange(12).reshape(3, 4) % 4)
    return x.copy(), lazy.asarray(x.copy()) * 1 if kind == "float" else lazy.asarray(x.copy()) + 0


def _same(got, want, what):
    if isinstance(want, (tuple, list)):
        got = list(got)
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            _same(g, w, what)
        return
    if isinstance(want, (bytes, str, bool, int, float, complex, numpy.generic, numpy.ndarray)):
        g = numpy.asarray(got)
        w = numpy.asarray(want)
        assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != {w.dtype}"
        numpy.testing.assert_allclose(g, w, rtol=1e-12, atol=0, equal_nan=True, err_msg=what) \
            if g.dtype.kind in "fc" else numpy.testing.assert_array_equal(g, w, err_msg=what)
        return
    assert got == want, what


# method -> (array kind, args, kwargs, in place?)
METHODS = {
    "all": ("float", (), {"axis": 0}, False), "any": ("float", (), {}, False),
    "argmax": ("float", (), {"axis": 1}, False), "argmin": ("float", (), {}, False),
    "argpartition": ("float", (1,), {}, False), "argsort": ("float", (), {"axis": 0}, False),
    "astype": ("float", (numpy.int32,), {}, False), "byteswap": ("float", (), {}, False),
    "choose": ("int", ([10, 20, 30, 40],), {}, False), "clip": ("float", (-1, 5), {}, False),
    "compress": ("float", ([True, False, True],), {"axis": 0}, False),
    "conj": ("float", (), {}, False), "conjugate": ("float", (), {}, False),
    "copy": ("float", (), {}, False), "cumprod": ("float", (), {"axis": 1}, False),
    "cumsum": ("float", (), {}, False), "diagonal": ("float", (), {"offset": 1}, False),
    "dot": ("float", (numpy.ones(4),), {}, False), "fill": ("float", (2.5,), {}, True),
    "flatten": ("float", (), {}, False), "getfield": ("float", (numpy.float64,), {}, False),
    "item": ("float", (5,), {}, False), "max": ("float", (), {"axis": 0, "keepdims": True}, False),
    "mean": ("float", (), {"axis": (0, 1)}, False), "min": ("float", (), {}, False),
    "nonzero": ("float", (), {}, False), "partition": ("float", (2,), {}, True),
    "prod": ("float", (), {"axis": 1}, False), "put": ("float", ([0, 5], [9.0, 8.0]), {}, True),
    "ravel": ("float", (), {}, False), "repeat": ("float", (2,), {"axis": 1}, False),
    "reshape": ("float", (4, 3), {}, False), "round": ("float", (1,), {}, False),
    "searchsorted": ("sorted", (3.0,), {}, False), "setflags": ("float", (), {"write": True}, True),
    "sort": ("float", (), {"axis": 0}, True), "squeeze": ("float", (), {}, False),
    "std": ("float", (), {"axis": 0}, False), "sum": ("float", (), {"axis": (0, 1), "dtype": numpy.float32}, False),
    "swapaxes": ("float", (0, 1), {}, False), "take": ("float", ([0, 2],), {"axis": 1}, False),
    "to_device": ("float", ("cpu",), {}, False), "tobytes": ("float", (), {}, False),
    "tolist": ("float", (), {}, False), "trace": ("float", (), {}, False),
    "transpose": ("float", (1, 0), {}, False), "var": ("float", (), {}, False),
    "view": ("float", (numpy.int64,), {}, False),
}
ATTRIBUTES = {"T", "mT", "dtype", "imag", "real", "itemsize", "nbytes", "ndim", "shape", "size",
              "strides"}
SPECIAL = {"base", "ctypes", "data", "device", "flags", "flat", "dump", "dumps", "tofile",
           "resize", "setfield"}


def test_every_public_ndarray_name_is_covered():
    assert set(PUBLIC) == set(METHODS) | ATTRIBUTES | SPECIAL


@pytest.mark.parametrize("name", sorted(METHODS))
def test_ndarray_method(name):
    kind, args, kwargs, in_place = METHODS[name]
    if kind == "sorted":
        x = numpy.linspace(-2.0, 7.0, 10)
        a = lazy.asarray(x.copy()) * 1
    else:
        x, a = _pair(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        got = getattr(a, name)(*args, **kwargs)
    want = getattr(x, name)(*args, **kwargs)
    if in_place:
        _same(a, x, f"{name} (array after)")
    else:
        _same(got, want, name)


@pytest.mark.parametrize("name", sorted(ATTRIBUTES))
def test_ndarray_attribute(name):
    x, a = _pair()
    _same(getattr(a, name), getattr(x, name), name)


def test_special_attributes_and_file_methods(tmp_path):
    x, a = _pair()
    assert a.flags.c_contiguous and a.device == "cpu"
    assert list(a.flat) == list(x.flat)
    assert a.ctypes.data != 0 and bytes(a.data) == x.tobytes()
    assert a.base is None and x.base is None        # a result owns its memory, as NumPy's
    numpy.testing.assert_array_equal(pickle.loads(a.dumps()), x)
    a.dump(tmp_path / "d.pkl")
    numpy.testing.assert_array_equal(numpy.load(tmp_path / "d.pkl", allow_pickle=True), x)
    a.tofile(tmp_path / "t.bin")
    numpy.testing.assert_array_equal(numpy.fromfile(tmp_path / "t.bin").reshape(3, 4), x)
    y = numpy.zeros(3, dtype=[("f", "f8"), ("i", "i8")])
    b = lazy.asarray(y.copy())
    b.setfield(numpy.int64(5), numpy.int64, 8)
    y.setfield(numpy.int64(5), numpy.int64, 8)
    assert numpy.asarray(b).tolist() == y.tolist()
    c, z = lazy.asarray(numpy.arange(4.0).copy()), numpy.arange(4.0).copy()
    c.resize((2, 3))
    z.resize((2, 3))
    _same(c, z, "resize")
    d, w = lazy.asarray(numpy.arange(4.0).copy()) * 1, numpy.arange(4.0).copy() * 1
    d.resize((2, 3))                          # a computed array only its name refers to resizes,
    w.resize((2, 3))                          # as NumPy's does (it raised ValueError before)
    _same(d, w, "resize")


def test_setting_shape_and_strides_updates_the_view():
    a = lazy.arange(12.0) * 1
    a.shape = (3, 4)
    numpy.testing.assert_array_equal(numpy.asarray(a + 1), numpy.arange(12.0).reshape(3, 4) + 1)
    d = (lazy.arange(10.0) * 1)[:5]
    d.strides = (16,)                         # every other element of the base
    numpy.testing.assert_array_equal(numpy.asarray(d + 0), numpy.arange(0.0, 10.0, 2.0))
    with pytest.raises(ValueError, match="strides"):
        (lazy.arange(10.0) * 1).strides = (16,)
    e = lazy.arange(10.0) * 1
    e.shape = (5, 2)
    e.strides = (16, 8)
    numpy.testing.assert_array_equal(numpy.asarray(e * 2), numpy.arange(10.0).reshape(5, 2) * 2)
    with pytest.raises(ValueError, match="strides"):
        e.strides = (800, 8)


def _ufunc_inputs(uf):
    """NumPy-valid inputs for ufunc ``uf`` (float where it takes floats, else ints or bools)."""
    letters = {t.split("->")[0] for t in uf.types}
    f = numpy.array([[0.5, -1.25, 2.0], [3.5, 0.75, -0.3]])
    i = numpy.array([[3, 1, 4], [1, 5, 9]])
    if "d" * uf.nin in letters:
        return [f, f[::-1] + 0.1][:uf.nin]
    if "q" * uf.nin in letters or "l" * uf.nin in letters:
        return [i, i[::-1] % 3 + 1][:uf.nin]
    if "?" * uf.nin in letters:
        return [i > 2, i < 4][:uf.nin]
    if "dq" in letters or "dl" in letters or "di" in letters:
        return [f, i % 3]
    return None


UFUNCS = sorted(n for n in dir(numpy) if isinstance(getattr(numpy, n), numpy.ufunc))


@pytest.mark.parametrize("name", UFUNCS)
def test_every_ufunc_object(name):
    uf = getattr(numpy, name)
    ins = _ufunc_inputs(uf)
    if ins is None:
        pytest.skip(f"{name}: no float, int or bool loop ({uf.types[:3]})")
    if uf.signature:          # gufuncs (matmul, vecdot, matvec...): operands of the core dims
        cores = uf.signature.split("->")[0].split("),(")
        ins = [numpy.arange(1.0, 10.0).reshape(3, 3) + k if "," in c else numpy.arange(1.0, 4.0) - k
               for k, c in enumerate(cores)]
    ours = getattr(lazy, name)
    assert ours.nin == uf.nin and ours.__name__ == uf.__name__
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        got = ours(*[lazy.asarray(x.copy()) * 1 if x.dtype != bool else lazy.asarray(x.copy()) for x in ins])
        want = uf(*ins)
        _same(got, want, name)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "logical_or", "logical_and", "true_divide", "hypot"])
def test_ufunc_methods(name):
    uf, ours = getattr(numpy, name), getattr(lazy, name)
    x = numpy.array([[0.5, 1.25, 2.0], [3.5, 0.75, 1.5]])
    a = lazy.asarray(x.copy()) * 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        for axis in (0, 1, None, (0, 1)):
            try:
                want = uf.reduce(x, axis=axis)
            except ValueError:                 # not reorderable: NumPy's error, ours too
                with pytest.raises(ValueError):
                    numpy.asarray(ours.reduce(a, axis=axis))
                continue
            _same(ours.reduce(a, axis=axis), want, f"{name}.reduce {axis}")
        _same(ours.accumulate(a, axis=1), uf.accumulate(x, axis=1), f"{name}.accumulate")
        _same(ours.outer(a[0], a[1]), uf.outer(x[0], x[1]), f"{name}.outer")
        _same(ours.reduceat(a[0], [0, 2]), uf.reduceat(x[0], [0, 2]), f"{name}.reduceat")
        y = x.copy()
        ours.at(a, (0, [0, 0, 2]), 2.0)
        uf.at(y, (0, [0, 0, 2]), 2.0)
        _same(a, y, f"{name}.at")
        # the real NumPy ufunc's methods on lazy arrays dispatch the same way
        _same(uf.reduce(a, axis=1), uf.reduce(y, axis=1), f"numpy {name}.reduce")
        _same(uf.outer(a[0], a[1]), uf.outer(y[0], y[1]), f"numpy {name}.outer")


def test_fused_ufunc_reduce_records_one_reduction():
    a = lazy.ones((50, 40)) * 2.0
    r = lazy.add.reduce(a * a, axis=1)
    assert lazy.stats()["recorded"] >= 3 and r._base.data is None
    numpy.testing.assert_array_equal(numpy.asarray(r), numpy.full(50, 160.0))


F = numpy.array([[0.5, -1.25, 2.0, 1.0], [3.5, 0.75, -0.3, 2.5], [1.5, 2.25, 0.1, -4.0]])
V = numpy.array([1.0, 3.0, -2.0, 0.5])
# name -> (args as functions of (F, V) on either module's arrays, kwargs)
FUNCTIONS = {
    "sum": (lambda f, v: (f,), {"axis": (0, 1)}), "mean": (lambda f, v: (f,), {"axis": 1}),
    "prod": (lambda f, v: (f,), {"axis": 0, "keepdims": True}), "max": (lambda f, v: (f,), {}),
    "amin": (lambda f, v: (f,), {"axis": 1}), "any": (lambda f, v: (f > 2,), {}),
    "all": (lambda f, v: (f > -5,), {"axis": 0}), "where": (lambda f, v: (f > 0, f, -f), {}),
    "clip": (lambda f, v: (f, -1, 1), {}), "dot": (lambda f, v: (f, v), {}),
    "matmul": (lambda f, v: (f, f.T), {}), "outer": (lambda f, v: (v, v), {}),
    "roll": (lambda f, v: (f, 1), {"axis": 1}), "diff": (lambda f, v: (f,), {"axis": 0}),
    "diagonal": (lambda f, v: (f,), {"offset": -1}), "convolve": (lambda f, v: (v, v), {}),
    "meshgrid": (lambda f, v: (v, v[:2]), {}), "identity": (lambda f, v: (3,), {}),
    "eye": (lambda f, v: (3, 4), {"k": 1}), "diag": (lambda f, v: (v,), {}),
    "cumsum": (lambda f, v: (f,), {"axis": 1}), "sort": (lambda f, v: (f,), {}),
    "argsort": (lambda f, v: (v,), {}), "concatenate": (lambda f, v: ((f, f),), {}),
    "stack": (lambda f, v: ((v, v),), {"axis": 1}), "vstack": (lambda f, v: ((f, v),), {}),
    "hstack": (lambda f, v: ((v, v),), {}), "transpose": (lambda f, v: (f,), {}),
    "reshape": (lambda f, v: (f, (4, 3)), {}), "ravel": (lambda f, v: (f,), {}),
    "tile": (lambda f, v: (v, 2), {}), "repeat": (lambda f, v: (v, 2), {}),
    "linspace": (lambda f, v: (0, 1, 5), {}), "arange": (lambda f, v: (5,), {}),
    "zeros_like": (lambda f, v: (f,), {}), "full_like": (lambda f, v: (f, 7.0), {}),
    "abs": (lambda f, v: (f,), {}), "sqrt": (lambda f, v: (abs(f),), {}),
    "exp": (lambda f, v: (f,), {}), "maximum": (lambda f, v: (f, 0.5), {}),
    "isclose": (lambda f, v: (f, f), {}), "allclose": (lambda f, v: (f, f), {}),
    "trace": (lambda f, v: (f,), {}), "std": (lambda f, v: (f,), {"axis": 0}),
    "var": (lambda f, v: (f,), {}), "median": (lambda f, v: (f,), {}),
    "argmax": (lambda f, v: (f,), {"axis": 0}), "nonzero": (lambda f, v: (f > 1,), {}),
    "count_nonzero": (lambda f, v: (f > 1,), {}), "unique": (lambda f, v: (f > 1,), {}),
    "flip": (lambda f, v: (f,), {"axis": 0}), "expand_dims": (lambda f, v: (v, 0), {}),
    "squeeze": (lambda f, v: (f[None],), {}), "broadcast_to": (lambda f, v: (v, (2, 4)), {}),
    "tril": (lambda f, v: (f,), {}), "triu": (lambda f, v: (f,), {"k": 1}),
    "einsum": (lambda f, v: ("ij,j->i", f, v), {}), "kron": (lambda f, v: (v[:2], v[:2]), {}),
    "cross": (lambda f, v: (v[:3], v[1:]), {}), "interp": (lambda f, v: (v, [0.0, 1.0], [1.0, 2.0]), {}),
    "pad": (lambda f, v: (v, 1), {}), "append": (lambda f, v: (v, v), {}),
    "round": (lambda f, v: (f, 1), {}), "isnan": (lambda f, v: (f,), {}),
    "nan_to_num": (lambda f, v: (f,), {}), "cumprod": (lambda f, v: (v,), {}),
    "searchsorted": (lambda f, v: ([1.0, 2.0, 3.0], v), {}), "histogram": (lambda f, v: (v,), {"bins": 3}),
    "shape": (lambda f, v: (f,), {}), "ndim": (lambda f, v: (f,), {}), "size": (lambda f, v: (f,), {}),
}
# the functions the issue names: fused or NumPy's own, never a warning
SILENT = {"meshgrid", "identity", "diagonal", "convolve", "sum", "matmul", "dot", "roll", "diff",
          "mean", "where", "clip", "outer", "sort", "cumsum", "concatenate", "stack", "eye",
          "transpose", "reshape", "abs", "sqrt", "exp", "maximum", "max", "amin", "any", "all",
          "prod", "zeros_like", "full_like", "linspace", "arange", "shape", "ndim", "size"}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("caller", ["lazy", "numpy"])
def test_numpy_function(name, caller):
    make, kwargs = FUNCTIONS[name]
    want = getattr(numpy, name)(*make(F.copy(), V.copy()), **kwargs)
    args = make(lazy.asarray(F.copy()) * 1, lazy.asarray(V.copy()) * 1)
    module = lazy if caller == "lazy" else numpy
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", lazy.FallbackWarning)
        got = getattr(module, name)(*args, **kwargs)
        got = got if not isinstance(got, lazy.LazyArray) else numpy.asarray(got)
    _same(got, want, f"{caller}.{name}")
    warned = [w for w in caught if issubclass(w.category, lazy.FallbackWarning)]
    if name in SILENT:
        assert not warned, f"{name}: {warned[0].message}"
    for w in warned:             # a fallback warning points at this file, the user's line
        assert w.filename == __file__


def test_seterr_and_plain_calls_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        old = lazy.seterr(all="ignore")
        lazy.seterr(**old)
        assert lazy.stats().get("fallbacks", 0) == 0 and lazy.stats()["numpy_calls"] == 2


def test_issue_crashes_now_match_numpy():
    x, a = _pair()
    _same(a.repeat(3, axis=1), x.repeat(3, axis=1), "repeat")
    _same(lazy.add.reduce(a, axis=1), numpy.add.reduce(x, axis=1), "add.reduce")
    r = numpy.asarray(a[1])
    assert type(r) is numpy.ndarray and r.tolist() == x[1].tolist()
    s = numpy.asarray(a[1, 2])
    assert type(s) is numpy.ndarray and s.shape == () and float(s) == x[1, 2]
    v, want = a[1, 2], x[1, 2]
    a[1, 2] = 99.0                      # an element is NumPy's scalar, a copy: not changed
    x[1, 2] = 99.0
    assert type(v) is type(want) and v == want
    w = a[1, 2:3]                       # a slice is a view: it sees the write
    assert float(w[0]) == 99.0


def test_mask_assignment_is_recorded():
    x = numpy.linspace(-1, 1, 1000)
    a = lazy.asarray(x.copy()) * 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        a[a > 0.5] = 0
        a[numpy.abs(x) < 0.1] = 7.0
    y = x.copy()
    y[y > 0.5] = 0
    y[numpy.abs(x) < 0.1] = 7.0
    numpy.testing.assert_array_equal(numpy.asarray(a), y)
    assert lazy.stats().get("fallbacks", 0) == 0


def test_fallback_warning_points_at_the_users_line():
    a = lazy.asarray(numpy.arange(5.0)) * 1
    with pytest.warns(lazy.FallbackWarning) as caught:
        a[[0, 2]]                                          # fancy indexing falls back
    assert caught[0].filename == __file__
    with pytest.warns(lazy.FallbackWarning) as caught:
        numpy.sinc(a)                                      # through __array_function__
    assert caught[0].filename == __file__


def test_no_submodule_hides_a_numpy_name():
    """``import flamefuse.lazy as np``: a module of the package named like a NumPy function
    (``select``, ``array``) must not stand where the script expects NumPy's: ``np.select`` was
    the ``flamefuse.lazy.select`` module, and a fused script calling it crashed."""
    import pkgutil
    import types
    clash = [m.name for m in pkgutil.iter_modules(lazy.__path__) if hasattr(numpy, m.name)
             and isinstance(getattr(lazy, m.name), types.ModuleType)
             != isinstance(getattr(numpy, m.name), types.ModuleType)]
    assert clash == []


def test_select_is_numpys():
    x, a = _pair()
    want = numpy.select([x < 0, x > 5], [x, x ** 2], default=-1.0)
    got = lazy.select([a < 0, a > 5], [a, a ** 2], default=-1.0)
    numpy.testing.assert_array_equal(numpy.asarray(got), want)


@pytest.mark.parametrize("trick", ["mgrid", "ogrid"])
def test_index_grids_give_lazy_arrays(trick):
    """``np.mgrid[...]`` / ``np.ogrid[...]`` give lazy arrays, so what the script computes from
    the grid is recorded (NumPy's own object gave plain ndarrays: sobel's ``y, x = np.mgrid[0:n,
    0:n] / n`` and everything after it ran as plain NumPy); values and forms are NumPy's."""
    key = (slice(0, 7), slice(1, 6, 2))
    got, want = getattr(lazy, trick)[key], getattr(numpy, trick)[key]
    parts = list(got) if trick == "ogrid" else [got]
    assert all(isinstance(p, lazy.LazyArray) for p in parts)
    before = lazy.stats().get("recorded", 0)
    r = got[0] * got[1] + 1.5
    assert lazy.stats().get("recorded", 0) > before
    assert numpy.array_equal(numpy.asarray(r), want[0] * want[1] + 1.5)
    assert numpy.array_equal(numpy.asarray(getattr(lazy, trick)[0:1:5j]), getattr(numpy, trick)[0:1:5j])
