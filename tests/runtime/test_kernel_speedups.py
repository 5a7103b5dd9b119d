"""Faster forms of recorded operations, each compared with NumPy on random inputs.

* ``x ** p`` for p in +-0.5, +-1.5 (``hpow<p>``: square roots and divisions instead of
  ``pow``), compiled by Numba: within a couple of ulps of NumPy, pow's values at the special
  points;
* ``A @ x`` of a matrix still being computed: a recorded multiply and row sum, fused with
  the operations that compute ``A`` (no loop-nest product, ``A`` never stored);
* ``np.stack`` of pending arrays: recorded copies (no sync point);
* ``ndarray += lazy``: recorded into the NumPy array's memory and synced, no fallback;
* windows of a long loop that differ only in scalars and read-only offsets share one
  partition (:func:`flamefuse.runtime.execute.canonical`).
"""
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import flamefuse.lazy as lazy
from flamefuse.lazy.elementwise import HALF_POWERS
from flamefuse.lazy.recorder import RECORDER
from flamefuse.runtime.kernel import half_power

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SPECIAL = [0.0, -0.0, numpy.inf, -numpy.inf, numpy.nan, 1.0, -1.0, 4.0, 0.25, 1e-300, 1e300, 5e-324,
           -2.5, 3.0e-39, 1.0e38]


def _lazy_power(x: numpy.ndarray, p: float) -> numpy.ndarray:
    lx = lazy.asarray(x.copy()) * 1      # pending, so the power is recorded, not run eagerly
    r = lx ** p
    # NumPy's operator runs x ** 0.5 as np.sqrt (its fast form: its warnings name sqrt), so
    # does flamefuse since fuzz14; np.power(x, 0.5) and the other half powers are hpow<p>
    assert RECORDER.ops[-1].name == ("sqrt" if p == 0.5 else f"hpow{p}")
    return numpy.asarray(r)


def _assert_close_ulps(got, want, dtype):
    """Same NaNs, infinities and zero signs; finite values within 4 ulps (absolute below the
    smallest normal: subnormal results round differently)."""
    finfo = numpy.finfo(dtype)
    assert got.dtype == want.dtype
    numpy.testing.assert_array_equal(numpy.isnan(got), numpy.isnan(want))
    numpy.testing.assert_array_equal(got[numpy.isinf(want)], want[numpy.isinf(want)])
    zero = want == 0
    numpy.testing.assert_array_equal(numpy.signbit(got[zero]), numpy.signbit(want[zero]))
    ok = numpy.isfinite(want)
    numpy.testing.assert_allclose(got[ok], want[ok], rtol=4 * finfo.eps, atol=finfo.tiny)


@SETTINGS
@given(p=st.sampled_from(HALF_POWERS), dtype=st.sampled_from(["float64", "float32"]),
       data=st.data())
def test_half_powers_match_numpy(recording, p, dtype, data):
    big = 2.0 ** 80 if dtype == "float32" else 2.0 ** 600
    x = data.draw(hnp.arrays(dtype, st.integers(1, 40), elements=st.one_of(
        st.floats(-big, big, width=32 if dtype == "float32" else 64),
        st.sampled_from(SPECIAL).map(lambda v: numpy.array(v).astype(dtype).item()))))
    with numpy.errstate(all="ignore"):
        want = x ** p
        got = _lazy_power(x, p)
    _assert_close_ulps(got, want, dtype)


@pytest.mark.parametrize("p", HALF_POWERS)
def test_half_powers_special_values_are_pows(recording, p):
    x = numpy.array(SPECIAL)
    with numpy.errstate(all="ignore"):
        want = numpy.power(x, p) if p != 0.5 else x ** 0.5     # 0.5: NumPy's operator is sqrt
        got = _lazy_power(x, p)
    _assert_close_ulps(got, want, "float64")


def test_half_power_source_has_no_pow():
    for p in HALF_POWERS:
        expr = half_power("t1", p, "float64")
        assert "**" not in expr and "pow" not in expr and "np.sqrt(" in expr


def test_other_float_powers_still_use_pow(recording):
    x = numpy.linspace(0.5, 3.0, 11)
    r = (lazy.asarray(x) * 1) ** 2.5
    assert RECORDER.ops[-1].name == "power"
    numpy.testing.assert_allclose(numpy.asarray(r), x ** 2.5, rtol=1e-15)


def _pairwise(np, pos, mass, soft):
    x, y = pos[:, 0:1], pos[:, 1:2]
    dx, dy = x.T - x, y.T - y
    inv3 = (dx ** 2 + dy ** 2 + soft) ** -1.5
    return np.stack([(dx * inv3) @ mass, (dy * inv3) @ mass], axis=1)


@SETTINGS
@given(n=st.integers(1, 9), dtype=st.sampled_from(["float64", "float32"]), seed=st.integers(0, 99))
def test_pending_matvec_is_a_fused_row_sum(recording, n, dtype, seed):
    lazy.flush()
    lazy.reset_stats()
    rng = numpy.random.default_rng(seed)
    pos, mass = rng.standard_normal((n, 2)).astype(dtype), rng.random(n).astype(dtype)
    want = _pairwise(numpy, pos, mass, dtype == "float32" and numpy.float32(0.1) or 0.1)
    got = _pairwise(lazy, lazy.asarray(pos), lazy.asarray(mass), 0.1)
    assert not any(op.kind == "product" for op in RECORDER.ops)
    assert lazy.stats().get("flushes", 0) == 0          # stack recorded: nothing synced yet
    got = numpy.asarray(got)
    assert lazy.stats().get("loopnest_groups", 0) == 0 and got.dtype == want.dtype
    numpy.testing.assert_allclose(got, want, rtol=1e-4 if dtype == "float32" else 1e-11,
                                  atol=1e-4 if dtype == "float32" else 1e-11)


def test_concrete_matrix_keeps_the_loop_nest_product(recording):
    rng = numpy.random.default_rng(2)
    A, v = rng.random((6, 4)), rng.random(4)
    r = lazy.asarray(A) @ lazy.asarray(v)
    assert RECORDER.ops[-1].kind == "product"
    numpy.testing.assert_allclose(numpy.asarray(r), A @ v, rtol=1e-12)


def test_pending_transposed_matrix_is_a_product(recording):
    rng = numpy.random.default_rng(3)
    A, v = rng.random((6, 4)), rng.random(6)
    r = ((lazy.asarray(A) * 2.0).T) @ lazy.asarray(v)
    assert RECORDER.ops[-1].kind == "product"
    numpy.testing.assert_allclose(numpy.asarray(r), (A * 2.0).T @ v, rtol=1e-12)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), k=st.integers(1, 4),
       data=st.data())
def test_stack_of_pending_arrays_matches_numpy(recording, shape, k, data):
    lazy.flush()
    lazy.reset_stats()
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [data.draw(hnp.arrays("float64", shape, elements=st.floats(-9, 9))) for _ in range(k)]
    got = lazy.stack([lazy.asarray(a) + 1.0 for a in arrays], axis=axis)
    assert lazy.stats().get("flushes", 0) == 0
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.stack([a + 1.0 for a in arrays], axis=axis))


def test_stack_of_mixed_dtypes_is_numpys(recording):
    a, b = lazy.asarray(numpy.arange(3.0)) + 1, lazy.asarray(numpy.arange(3)) + 1
    got = lazy.stack([a, b])
    assert got.dtype == numpy.float64
    numpy.testing.assert_array_equal(numpy.asarray(got), [[1.0, 2, 3], [1, 2, 3]])


def test_stack_axis_out_of_range_raises_like_numpy(recording):
    a = lazy.asarray(numpy.ones(3)) + 1
    with pytest.raises(numpy.exceptions.AxisError):
        lazy.stack([a, a], axis=2)


@SETTINGS
@given(data=st.data())
def test_ndarray_inplace_update_from_pending_is_recorded(recording, data):
    lazy.reset_stats()
    vel = data.draw(hnp.arrays("float64", (5, 3), elements=st.floats(-9, 9)))
    acc = data.draw(hnp.arrays("float64", (5, 3), elements=st.floats(-9, 9)))
    want = vel + acc * 0.5
    target = vel.copy()
    before = target
    target += lazy.asarray(acc) * 0.5
    assert target is before and type(target) is numpy.ndarray
    assert lazy.stats().get("fallbacks", 0) == 0
    numpy.testing.assert_array_equal(target, want)


def test_ndarray_inplace_update_with_aliasing_falls_back_correctly(recording):
    base = numpy.arange(6.0)
    view_of_base = lazy.asarray(base)[::-1] * 1.0       # pending, reads base's memory reversed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        base += view_of_base
    numpy.testing.assert_array_equal(numpy.asarray(base), numpy.arange(6.0) + numpy.arange(6.0)[::-1])


def _window(offset_a: int, offset_w: int, scalar: int):
    from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
    from flamefuse.runtime.views import make_view
    row = make_view(offset_a, (4,), (1,))
    out = make_view(offset_w, (4,), (1,))
    ops = (Op("ew", "multiply", Ref(1, out), (Ref(0, row), Scalar(scalar, "float64")), (4,),
              ("float64", "float64", "float64")),
           Op("ew", "add", Ref(1, make_view(0, (4,), (1,))), (Ref(1, out), Ref(0, row)), (4,),
              ("float64", "float64", "float64")))
    return Program(ops, (BaseInfo("float64", 40, False, False), BaseInfo("float64", 8, False, False)))


def test_canonical_windows_ignore_scalar_numbers_and_read_only_offsets():
    from flamefuse.runtime.execute import canonical
    assert canonical(_window(0, 0, 0))[0] == canonical(_window(12, 0, 5))[0]
    # a written base's offset decides overlaps: it stays in the key
    assert canonical(_window(0, 0, 0))[0] != canonical(_window(0, 4, 0))[0]


def _spheres(np, dx, dy, centres, radii, mu, steps):
    path = np.zeros(dx.shape)
    for s in range(steps):
        ox, oy = centres[s]
        b = ox * dx + oy * dy
        disc = b * b - (ox * ox + oy * oy - radii[s] ** 2)
        path += mu[s] * (2.0 * np.sqrt(np.maximum(disc, 0.0)))
    return path


@SETTINGS
@given(seed=st.integers(0, 999), steps=st.integers(1, 30))
def test_long_loops_with_shared_window_partitions_match_numpy(interpreted, seed, steps):
    from flamefuse.runtime import execute
    rng = numpy.random.default_rng(seed)
    dx, dy = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    centres, radii, mu = rng.uniform(-1, 1, (steps, 2)), rng.uniform(0.1, 2, steps), rng.random(steps)
    want = _spheres(numpy, dx, dy, centres, radii, mu, steps)
    execute._WINDOW_PLANS.clear()
    got = _spheres(lazy, lazy.asarray(dx), lazy.asarray(dy), lazy.asarray(centres), lazy.asarray(radii),
                   lazy.asarray(mu), steps)
    numpy.testing.assert_allclose(numpy.asarray(got), want, rtol=1e-13, atol=1e-13)
    assert len(execute._WINDOW_PLANS) <= 5        # about 12 ops a step: up to 6 windows of 64 ops
