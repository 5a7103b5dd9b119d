"""The five fused kernels equal eager NumPy for random (also non-square) sizes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flamefuse.loopnest.kernels import KERNELS

SIZES = st.integers(1, 40)


def _inputs(name, n, m, rng):
    if name in ("bicg", "atax"):
        vec = {"bicg": {"p": m, "r": n}, "atax": {"x": m}}[name]
        return {"A": rng.standard_normal((n, m)), **{k: rng.standard_normal(s) for k, s in vec.items()}}
    return KERNELS[name][2](n, rng)


def _copy(d):
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in d.items()}


@pytest.mark.parametrize("reorder", [False, True])
@pytest.mark.parametrize("name", sorted(KERNELS))
@settings(max_examples=12, deadline=None)
@given(n=SIZES, m=SIZES, seed=st.integers(0, 2**31))
def test_matches_numpy(compiled, name, reorder, n, m, seed):
    rng = np.random.default_rng(seed)
    inp = _inputs(name, n, m, rng)
    got = compiled(name, reorder)(**_copy(inp))
    want = KERNELS[name][1](**_copy(inp))
    assert set(want) <= set(got)
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-10, atol=1e-10)


def test_inout_updated_in_place_even_when_strided(compiled):
    rng = np.random.default_rng(1)
    inp = KERNELS["mvt"][2](9, rng)
    want = KERNELS["mvt"][1](**_copy(inp))
    big = np.zeros(18)
    big[::2] = inp["x1"]
    x1 = big[::2]                                  # not contiguous: written back
    out = compiled("mvt", True)(**{**_copy(inp), "x1": x1})
    assert out["x1"] is x1
    np.testing.assert_allclose(x1, want["x1"], rtol=1e-12)
    np.testing.assert_allclose(big[::2], want["x1"], rtol=1e-12)


def test_parallel_plans_and_no_prange_reductions(compiled):
    fast, exact = compiled("bicg", True), compiled("bicg", False)
    assert fast.plans[0].parallel and fast.plans[0].private == (1,)
    assert not exact.plans[0].parallel and "carried" in exact.plans[0].reason
    for name in KERNELS:
        src = compiled(name, True).source
        assert "+=" not in src and "-=" not in src    # never a prange reduction variable
    assert "_p_s = np.full((_nt,) + s.shape, 0.0" in fast.source
    assert "fastmath" not in exact.source and "in prange(" not in exact.source
