"""The SciPy-style function of each generated module: any layout in, NumPy/SciPy's answer out.

Also the interface fuzz: random shapes, dtypes, layouts, flags, operand counts
and block sizes; every call returns NumPy's result or raises TypeError,
ValueError or LinAlgError with a message that says what to change.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flamefuse.codegen import load_generated

ROOT = Path(__file__).resolve().parents[2]
MOD = {p.stem: load_generated(p) for p in sorted((ROOT / "generated").glob("*.py"))}


def spd(rng, n):
    x = rng.standard_normal((n, n))
    return x @ x.T + n * np.eye(n)


def lower(rng, n):
    return np.tril(rng.standard_normal((n, n))) + n * np.eye(n)


# spec -> (inputs(rng, n), reference(*inputs)) for the functions with a NumPy/SciPy counterpart
REFERENCE = {
    "spd_inverse": (lambda r, n: [spd(r, n)], np.linalg.inv),
    "cholesky": (lambda r, n: [spd(r, n)], np.linalg.cholesky),
    "chol_trinv": (lambda r, n: [spd(r, n)], lambda a: np.linalg.inv(np.linalg.cholesky(a))),
    "general_inverse": (lambda r, n: [r.standard_normal((n, n))], np.linalg.inv),
    "lu_solve": (lambda r, n: [r.standard_normal((n, n)), r.standard_normal((n, 3))], np.linalg.solve),
    "trsm": (lambda r, n: [lower(r, n), r.standard_normal((n, 3))],
             lambda a, b: sla.solve_triangular(a, b, lower=True)),
    "trsv": (lambda r, n: [lower(r, n), r.standard_normal(n)], lambda a, b: sla.solve_triangular(a, b, lower=True)),
    "trinv": (lambda r, n: [lower(r, n)], lambda a: np.linalg.inv(np.tril(a))),
    "ltl": (lambda r, n: [lower(r, n)], lambda a: np.tril(a).T @ np.tril(a)),
    "chol_trsm": (lambda r, n: [spd(r, n), r.standard_normal((n, 3))],
                  lambda a, b: sla.solve_triangular(np.linalg.cholesky(a), b, lower=True)),
    "trmv": (lambda r, n: [lower(r, n), r.standard_normal(n), r.standard_normal(n)],
             lambda a, x, y: y + np.tril(a) @ x),
}


def layouts(a):
    """The same values as C-ordered, Fortran-ordered and strided arrays."""
    if a.ndim == 1:
        wide = np.zeros(2 * a.size)
        wide[::2] = a
        return {"C": a.copy(), "strided": wide[::2]}
    wide = np.zeros((a.shape[0], 2 * a.shape[1]), order="F")
    wide[:, ::2] = a
    return {"C": np.ascontiguousarray(a), "F": np.asfortranarray(a), "strided": wide[:, ::2]}


@pytest.mark.parametrize("spec", sorted(REFERENCE))
@pytest.mark.parametrize("n", [1, 5, 70])
def test_any_layout_gives_numpys_answer_and_leaves_the_input(spec, n):
    make, ref = REFERENCE[spec]
    base = make(np.random.default_rng(n), n)
    want = ref(*base)
    fn = getattr(MOD[spec], spec)
    for layout in ("C", "F", "strided"):
        args = [layouts(a).get(layout, layouts(a)["C"]) for a in base]
        before = [a.copy() for a in args]
        got = fn(*args)
        assert np.allclose(got, want, rtol=1e-9, atol=1e-11), (spec, layout)
        assert all(np.array_equal(a, b) for a, b in zip(args, before)), (spec, layout)


def test_lu_returns_lu_factor():
    a = np.random.default_rng(3).standard_normal((40, 40))
    lu_, piv = MOD["lu"].lu(a)
    want_lu, want_piv = sla.lu_factor(a)
    assert np.allclose(lu_, want_lu) and np.array_equal(piv, want_piv)


@pytest.mark.parametrize("spec,flip", [("spd_inverse", True), ("general_inverse", True), ("cholesky", True),
                                       ("lu", False)])
def test_overwrite_uses_the_callers_memory(spec, flip):
    make, ref = REFERENCE.get(spec, (lambda r, n: [r.standard_normal((n, n))], None))
    a = make(np.random.default_rng(1), 30)[0]
    f = np.asfortranarray(a)
    out = getattr(MOD[spec], spec)(f, overwrite_a=True)
    assert np.shares_memory(out[0] if isinstance(out, tuple) else out, f)
    c = np.array(a, order="C")
    out = getattr(MOD[spec], spec)(c, overwrite_a=True)
    assert np.shares_memory(out[0] if isinstance(out, tuple) else out, c) == flip
    if ref is not None:
        assert np.allclose(out, ref(a))


@pytest.mark.parametrize("spec", ["spd_inverse", "lu_solve", "trmv"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_finite_names_the_operand(spec, bad):
    make, _ = REFERENCE[spec]
    fn = getattr(MOD[spec], spec)
    for k, name in enumerate(o[0] for o in MOD[spec]._OPERANDS):
        args = make(np.random.default_rng(0), 6)
        args[k].flat[3] = bad
        with pytest.raises(ValueError, match=f"^{name} must not contain infs or NaNs"):
            fn(*args)
        fn(*args, check_finite=False) if spec == "trmv" else None   # no check: runs (NaN propagates)


def test_failures_raise_like_numpy():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        MOD["spd_inverse"].spd_inverse(-np.eye(4))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        MOD["general_inverse"].general_inverse(np.ones((4, 4)))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        MOD["lu_solve"].lu_solve(np.zeros((3, 3)), np.ones(3)[:, None])
    with pytest.warns(sla.LinAlgWarning, match="exactly zero"):
        MOD["lu"].lu(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="unknown variant"):
        MOD["cholesky"].cholesky(np.eye(2), variant="nope")


# ---------------------------------------------------------------- fuzz

DTYPES = [np.float64] * 12 + [np.float32, np.int64, np.bool_, np.complex128, np.float16, object]


@st.composite
def calls(draw):
    spec = draw(st.sampled_from(sorted(MOD)))
    mod = MOD[spec]
    n = draw(st.integers(0, 9))
    ops = mod._OPERANDS
    count = draw(st.sampled_from([len(ops)] * 12 + [len(ops) - 1, len(ops) + 1]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    args = []
    for k in range(max(count, 0)):
        kind = ops[k][1] if k < len(ops) else "matrix"
        shape = (n,) if kind == "vector" else (n, draw(st.sampled_from([n] * 12 + [n + 1, 3])))
        if draw(st.integers(0, 29)) == 0:
            shape = draw(st.sampled_from([(), (n,), (n, n, 2)]))
        dtype = draw(st.sampled_from(DTYPES))
        a = rng.standard_normal(shape)
        if len(shape) == 2 and shape[0] == shape[1]:     # symmetric, positive definite: valid for every spec
            a = (a + a.T) / 2 + (n + 1) * np.eye(n)
        a = np.asarray(a)
        a = a.astype(dtype)
        layout = draw(st.sampled_from(["C", "C", "F", "F", "strided", "readonly"]))
        if layout == "F":
            a = np.asfortranarray(a)
        elif layout == "strided" and a.ndim >= 1 and a.shape[-1] > 1:
            a = a[..., ::2]
        elif layout == "readonly":
            a.flags.writeable = False
        args.append(a)
    block = draw(st.sampled_from([None] * 8 + [1, 2, 64, 0, -3, 2.5, "8", True]))
    inplace = draw(st.booleans())
    return spec, args, block, inplace


def _ok_message(err: Exception) -> bool:
    text = str(err)
    return len(text) > 10 and any(w in text for w in ("must", "got", "singular", "positive definite", "argument"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_fuzz_the_kernel_interface(call):
    spec, args, block, inplace = call
    mod = MOD[spec]
    fn = mod.DEFAULT if inplace else getattr(mod, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(*args, block_size=block)
        except (TypeError, ValueError, np.linalg.LinAlgError) as err:
            assert _ok_message(err), (spec, repr(err))
            return
    if inplace:
        assert isinstance(out, int) and out >= 0
    elif spec in REFERENCE and all(a.dtype.kind in "biuf" for a in args):
        want = REFERENCE[spec][1](*[np.asarray(a, dtype=np.float64) for a in args])
        assert np.allclose(out, want, rtol=1e-6, atol=1e-8), spec
