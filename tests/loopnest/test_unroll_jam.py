"""Unroll-and-jam of parallel two-deep nests: every factor, every remainder, vs NumPy."""
import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flamefuse.loopnest import Builder, Dim, fuse_program, maximum
from flamefuse.loopnest.kernels import KERNELS

i, j = Dim("i"), Dim("j")
FACTORS = (1, 2, 3, 5, 8)


def _copy(d):
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in d.items()}


def _inputs(name, n, m, rng):
    if name in ("bicg", "atax"):
        vec = {"bicg": {"p": m, "r": n}, "atax": {"x": m}}[name]
        return {"A": rng.standard_normal((n, m)), **{k: rng.standard_normal(s) for k, s in vec.items()}}
    return KERNELS[name][2](n, rng)


@pytest.mark.parametrize("unroll", FACTORS)
@pytest.mark.parametrize("name", sorted(KERNELS))
@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 13), m=st.integers(1, 13), threads=st.sampled_from([1, 2]),
       seed=st.integers(0, 2**31))
def test_kernels_match_numpy_for_every_factor(name, unroll, n, m, threads, seed):
    k = fuse_program(KERNELS[name][0](), reorder_float=True, unroll=unroll)
    assert ("_top = _lo" in k.source) == (unroll > 1)
    inp = _inputs(name, n, m, np.random.default_rng(seed))
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        got = k(**_copy(inp))
    finally:
        numba.set_num_threads(before)
    for key, value in KERNELS[name][1](**_copy(inp)).items():
        np.testing.assert_allclose(got[key], value, rtol=1e-10, atol=1e-10)


def _mixed():
    """A leaf before the inner loop, a per-row max, a per-row sum, a column sum
    and a grand total in one parallel nest: every scalar-replacement case."""
    b = Builder()
    A, r = b.array("A", ("n", "m")), b.array("r", ("n",))
    t = b.array("t", ("n",), role="out")
    rowmax = b.array("rowmax", ("n",), role="out", fill=-np.inf)
    rowsum = b.array("rowsum", ("n",), role="out")
    col = b.array("col", ("m",), role="out")
    total = b.array("total", (), role="out")
    b.assign(t[i], r[i] * 2.0)
    b.accumulate(rowmax[i], A[i, j], op="max")
    b.accumulate(rowsum[i], A[i, j] * t[i])
    b.accumulate(col[j], A[i, j] * t[i])
    b.accumulate(total[()], A[i, j], extents={"i": "n", "j": "m"})
    return b.program(outputs=[t, rowmax, rowsum, col, total])


@pytest.mark.parametrize("unroll", FACTORS)
@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 11), m=st.integers(1, 9), seed=st.integers(0, 2**31))
def test_shared_per_copy_and_per_iteration_locals(unroll, n, m, seed):
    k = fuse_program(_mixed(), reorder_float=True, unroll=unroll)
    assert len(k.schedule.roots) == 1 and k.plans[0].parallel
    rng = np.random.default_rng(seed)
    A, r = rng.standard_normal((n, m)), rng.standard_normal(n)
    got = k(A=A, r=r)
    np.testing.assert_allclose(got["t"], 2 * r)
    np.testing.assert_array_equal(got["rowmax"], A.max(axis=1))
    np.testing.assert_allclose(got["rowsum"], A.sum(axis=1) * 2 * r, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["col"], A.T @ (2 * r), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["total"], A.sum(), rtol=1e-12, atol=1e-12)


def test_jammed_source_shares_the_transposed_accumulator():
    src = fuse_program(KERNELS["bicg"][0](), reorder_float=True, unroll=4).source
    main = src.split("for i0 in range(_top, _hi)")[0]
    assert main.count("_c1 = _r") == 1 and main.count("] = _c1") == 1   # one load, one store per j
    assert all(f"_a0_{u} = q[" in main for u in range(4))              # four row dot products
    assert "range(_lo, _top, 4)" in main


def test_sequential_nest_is_not_jammed():
    b = Builder()
    x = b.array("x", ("m",), role="inout")
    A = b.array("A", ("n", "m"))
    b.assign(x[j], maximum(x[j] * 0.5, A[i, j]))        # carried, not a reduction
    k = fuse_program(b.program(), reorder_float=True, unroll=4)
    assert not k.plans[0].parallel and "_top" not in k.source
    A_, x_ = np.arange(12.0).reshape(3, 4), np.ones(4)
    want = x_.copy()
    for row in A_:
        want = np.maximum(want * 0.5, row)
    np.testing.assert_array_equal(k(A=A_, x=x_)["x"], want)
