"""The eager fast path: an operation on small computed lazy arrays runs NumPy's own call at once
without going through the general dispatch (issue 29 item 1: near-zero overhead on small arrays).

Structural checks, not timings: the general path's functions are replaced by ones that fail,
and each operation must still give NumPy's result bit for bit (and count as eager)."""
import numpy as np
import pytest

import flamefuse.lazy as lnp
import importlib

lazy_array = importlib.import_module("flamefuse.lazy.array")
numpy_api = importlib.import_module("flamefuse.lazy.numpy_api")
from flamefuse.lazy.hooks import HOOKS
from flamefuse.lazy.recorder import RECORDER, STATS


def _forbidden(*args, **kwargs):
    raise AssertionError("the general path was taken")


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(RECORDER, "eager_below", 32768)
    rng = np.random.default_rng(7)
    a0, b0 = rng.random(50), rng.random(50)
    return a0, b0, lnp.asarray(a0.copy()), lnp.asarray(b0.copy())


def test_index_read_and_write_skip_the_general_path(small, monkeypatch):
    a0, _, a, _ = small
    monkeypatch.setattr(lazy_array, "_concrete_nd", _forbidden)
    monkeypatch.setattr(lazy_array, "_basic", _forbidden)
    x = a[3]
    assert type(x) is np.float64 and x == a0[3]
    s = a[2:9]
    assert isinstance(s, lnp.LazyArray) and np.array_equal(s.numpy(), a0[2:9])
    before = STATS["eager"]
    a[4] = 0.25
    a[10:12] = 1.5
    a0[4], a0[10:12] = 0.25, 1.5
    assert STATS["eager"] == before + 2
    assert np.array_equal(a.numpy(), a0)
    s[0] = -1.0                   # a view's write reaches its base, as in NumPy
    a0[2] = -1.0
    assert np.array_equal(a.numpy(), a0)


def test_operators_matmul_and_unary_ufunc_skip_the_general_path(small, monkeypatch):
    a0, b0, a, b = small
    monkeypatch.setattr(HOOKS, "ufunc_call", _forbidden)
    monkeypatch.setattr(HOOKS, "matmul", _forbidden)
    monkeypatch.setattr(numpy_api, "ufunc_call", _forbidden)
    assert np.array_equal(np.asarray(a + b), a0 + b0)
    assert np.array_equal(np.asarray(a - b), a0 - b0)
    assert np.array_equal(np.asarray(a * 2.0), a0 * 2.0)
    r = a[3:20] @ b[3:20]
    assert r == a0[3:20] @ b0[3:20]
    assert np.array_equal(np.asarray(lnp.sqrt(a)), np.sqrt(a0))


def test_fast_path_keeps_numpys_errors(small, monkeypatch):
    _, _, a, _ = small
    with pytest.raises(IndexError):
        a[50]
    with pytest.raises(IndexError):
        a[50] = 1.0
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            lnp.log(a * 0.0)
    with pytest.warns(RuntimeWarning):
        lnp.sqrt(a - 2.0)


def test_numpy_function_dispatch_does_not_import_per_call(small, monkeypatch):
    """``np.dot(a, b)`` on lazy arrays finds ``flamefuse.lazy.dot`` once, not by an import and
    two lookups on every call (``__array_function__``)."""
    import builtins
    a0, b0, a, b = small
    assert np.dot(a, b) == np.dot(a0, b0)           # the first calls find the lazy functions
    assert np.array_equal(np.asarray(np.sum(a)), np.sum(a0))
    real_import = builtins.__import__

    def no_flamefuse_import(name, *args, **kwargs):
        if name.startswith("flamefuse"):
            raise AssertionError(f"import of {name} on the eager path")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_flamefuse_import)
    assert np.dot(a[1:30], b[1:30]) == np.dot(a0[1:30], b0[1:30])
    assert np.array_equal(np.asarray(np.sum(a)), np.sum(a0))


def test_small_part_of_a_large_computed_array_is_written_at_once(small, monkeypatch):
    """``H[i, :] = row`` of a computed value into a large computed array: NumPy's write now,
    on the fast path (not the general path's eager copy), nothing recorded or pending."""
    monkeypatch.setattr(lazy_array, "index_view", _forbidden)
    rng = np.random.default_rng(3)
    h0 = rng.random((300, 300))
    H = lnp.asarray(h0.copy())
    recorded = STATS["recorded"]
    for i in range(1, 5):
        row = H[i - 1, :] * 0.5 + 1.0
        H[i, :] = row
        h0[i, :] = h0[i - 1, :] * 0.5 + 1.0
        assert id(H._base) not in RECORDER.touched
    assert STATS["recorded"] == recorded
    assert np.array_equal(H.numpy(), h0)
    with pytest.raises(ValueError):
        H[0, :] = np.ones(7)         # NumPy's broadcast error


def test_small_empty_written_with_computed_values_skips_the_general_path(small, monkeypatch):
    _, b0, _, b = small
    monkeypatch.setattr(lazy_array, "index_view", _forbidden)
    row = lnp.empty(51)
    row[0] = -2.0
    row[1:] = b
    assert np.array_equal(row.numpy(), np.concatenate(([-2.0], b0)))


def test_small_full_reductions_skip_the_general_path(small, monkeypatch):
    a0, _, a, _ = small
    i0 = np.arange(-20, 30, dtype=np.int8)
    i = lnp.asarray(i0.copy())
    monkeypatch.setattr(HOOKS, "reduce_call", _forbidden)
    for x, x0 in ((a, a0), (i, i0)):
        for name in ("sum", "prod", "max", "min"):
            r, r0 = getattr(x, name)(), getattr(x0, name)()
            assert type(r) is type(r0) and (r == r0 or (np.isnan(r) and np.isnan(r0))), name
    with pytest.raises(AssertionError):     # a form the fast path leaves to the general path
        a.sum(axis=0)


@pytest.mark.parametrize("form", ["operator", "reflected", "ufunc", "clip", "where"])
def test_small_operands_broadcast_to_a_large_result_stay_lazy(form, monkeypatch):
    """A column and a row below ``eager_below`` whose broadcast result is above it (fdtd_2d's
    set-up: ``i * (j + 1)`` of ``arange`` vectors) are recorded: run at once, the result was a
    plain ndarray and every operation on the grid after it was plain NumPy, never recorded."""
    monkeypatch.setattr(RECORDER, "eager_below", 1000)
    i0, j0 = np.arange(60.0)[:, None], np.arange(1.0, 71.0)[None, :]
    i, j = lnp.arange(60.0)[:, None], lnp.arange(1.0, 71.0)[None, :]
    g, g0 = {"operator": (lambda: i * j, lambda: i0 * j0),
             "reflected": (lambda: i0 * j, lambda: i0 * j0),
             "ufunc": (lambda: lnp.multiply(i, j), lambda: i0 * j0),
             "clip": (lambda: lnp.clip(j, i, 30.0), lambda: np.clip(j0, i0, 30.0)),
             "where": (lambda: lnp.where(i > 20.0, i, j), lambda: np.where(i0 > 20.0, i0, j0)),
             }[form]
    g, g0 = g(), g0()
    assert isinstance(g, lnp.LazyArray)
    recorded = STATS["recorded"]
    g[1:, :] -= 0.5 * (g[1:, :] - g[:-1, :])
    g0[1:, :] -= 0.5 * (g0[1:, :] - g0[:-1, :])
    assert STATS["recorded"] > recorded     # the stencil on the grid was recorded
    assert np.array_equal(np.asarray(g), g0)
    small = i * 2.0                 # a small result stays NumPy's own, as before
    assert type(small) is np.ndarray and np.array_equal(small, i0 * 2.0)
