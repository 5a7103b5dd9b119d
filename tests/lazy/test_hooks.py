"""flamefuse.lazy.hooks: the one typed table of the calls that run up the lazy modules (#31 item 3)."""
import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.lazy import elementwise, numpy_api, products, selection
from flamefuse.lazy.hooks import HOOKS, HookNotInstalled, Hooks, _Missing
from flamefuse.values import fields


def test_every_hook_is_installed_by_the_package():
    missing = [name for name in fields(Hooks) if isinstance(getattr(HOOKS, name), _Missing)]
    assert missing == []
    assert HOOKS.ufunc_call is elementwise.ufunc_call
    assert HOOKS.matmul is products.matmul
    assert HOOKS.selection_type is selection.Selection
    assert HOOKS.native_functions is numpy_api.NATIVE
    # A @ B of float matrices: lazy.linalg.matmul, through a call that imports lazy.linalg (and
    # flamefuse.synth) at its first use only (start-up: docs/startup.md)
    assert HOOKS.linalg_matmul is lazy._linalg_matmul
    a = numpy.arange(12.0).reshape(3, 4)
    got = HOOKS.linalg_matmul(lazy.asarray(a), lazy.asarray(a.T))
    assert numpy.array_equal(numpy.asarray(got), a @ a.T)
    assert lazy.linalg is __import__("sys").modules["flamefuse.lazy.linalg"]


def test_a_hook_not_installed_says_which():
    fresh = Hooks()
    with pytest.raises(HookNotInstalled, match="'ufunc_call'"):
        fresh.ufunc_call(numpy.add, (1, 2))
    with pytest.raises(HookNotInstalled, match="'native_functions'"):
        "sort" in fresh.native_functions  # noqa: B015
    assert type(object()) is not fresh.selection_type      # no selection exists before select is


def test_install_takes_every_hook_by_name_and_nothing_else():
    given = {name: getattr(HOOKS, name) for name in fields(Hooks)}
    fresh = Hooks()
    with pytest.raises(TypeError, match="hooks not given \\['select'\\]"):
        fresh.install(**{k: v for k, v in given.items() if k != "select"})
    with pytest.raises(TypeError, match="unknown hooks \\['selekt'\\]"):
        fresh.install(**given, selekt=selection.select)
    fresh.install(**given)
    assert fresh == HOOKS


def test_the_hooked_paths_give_numpys_results():
    """One operation through each hook the class uses, against NumPy."""
    x0 = numpy.linspace(-2.0, 3.0, 30000)
    m0 = numpy.arange(30000.0).reshape(150, 200) / 7
    x, m = lazy.asarray(x0.copy()), lazy.asarray(m0.copy())
    numpy.testing.assert_allclose(numpy.asarray(x * 2 + 1), x0 * 2 + 1)              # ufunc_call
    numpy.testing.assert_allclose(numpy.asarray(x[x > 0] * 3).sum(), (x0[x0 > 0] * 3).sum())   # select
    y = x.copy()                                                                        # assign
    y[x < 0] = 0.5                                                                      # ufunc_where_into
    want = x0.copy()
    want[x0 < 0] = 0.5
    numpy.testing.assert_array_equal(numpy.asarray(y), want)
    assert float(x.sum()) == pytest.approx(x0.sum())                                    # reduce_call
    assert float(x.mean()) == pytest.approx(x0.mean())                                  # mean
    v = lazy.asarray(numpy.ones(200))
    numpy.testing.assert_allclose(numpy.asarray(m @ v), m0 @ numpy.ones(200))           # matmul
    numpy.testing.assert_allclose(numpy.asarray(numpy.add.reduce(m, axis=1)), m0.sum(axis=1))   # ufunc_type
    numpy.testing.assert_array_equal(numpy.asarray(numpy.cumsum(x)), numpy.cumsum(x0))  # numpy_call
    with pytest.warns(lazy.FallbackWarning, match="astype"):                         # fallback
        half = x.astype(numpy.float16)
    numpy.testing.assert_array_equal(numpy.asarray(half), x0.astype(numpy.float16))
    out = numpy.zeros(30000)
    numpy.add(x, 1.0, out=out)                                                          # into_ndarray
    numpy.testing.assert_array_equal(out, x0 + 1.0)
