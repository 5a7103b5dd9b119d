"""Tile task graphs of derived loops (flamefuse.dask.kernel) on Dask's threaded scheduler.

Each graph is compared with the generated module's SciPy-style function on the
same operands (the same derived loop in one Numba kernel) and with NumPy/SciPy,
with tolerances scaled to the conditioning.
"""
from __future__ import annotations

import sys
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flamefuse.codegen import load_generated
from flamefuse.dask import kernel
from flamefuse.errors import FlameError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "codegen"))
from codegen_cases import CASES  # noqa: E402

PIVOTED = {"lu", "lu_solve", "general_inverse"}
TWO_CLASSES = {"sylvester"}          # rows and columns move different ways: no single tile index
TILEABLE = sorted(p.stem for p in (ROOT / "generated").glob("*.py") if p.stem not in PIVOTED | TWO_CLASSES)


def spd(rng, n, dtype=np.float64):
    m = rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        m = m + 1j * rng.standard_normal((n, n))
    return (m @ m.conj().T / n + np.eye(n)).astype(dtype)


def run(fn, *arrays, chunks):
    with dask.config.set(scheduler="threads"):
        out = fn(*[da.from_array(x, chunks=chunks) for x in arrays])
        return [x.compute() for x in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("spec", TILEABLE)
def test_default_variant_matches_generated_module(spec):
    """n = 40 in chunks of 16: a ragged last tile (16, 16, 8)."""
    mod = load_generated(ROOT / "generated" / f"{spec}.py")
    ins, _ = CASES[spec](np.random.default_rng(3), 40)
    got = run(kernel(spec), *ins, chunks=16)
    ref = getattr(mod, spec)(*ins)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.shape == r.shape
        assert np.abs(g - r).max() <= 1e-12 * max(1.0, np.abs(r).max()), spec


@pytest.mark.parametrize("spec", ["spd_inverse", "chol_trsm", "trinv", "ltl"])
def test_every_variant(spec):
    mod = load_generated(ROOT / "generated" / f"{spec}.py")
    ins, _ = CASES[spec](np.random.default_rng(4), 33)
    for variant in mod.VARIANTS:
        got = run(kernel(spec, variant), *ins, chunks=8)
        ref = getattr(mod, spec)(*ins, variant=variant)
        ref = ref if isinstance(ref, tuple) else (ref,)
        for g, r in zip(got, ref):
            assert np.abs(g - r).max() <= 1e-12 * max(1.0, np.abs(r).max()), variant


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 70), chunk=st.integers(1, 40), seed=st.integers(0, 2 ** 16))
def test_spd_inverse_against_numpy(n, chunk, seed):
    chunk = max(chunk, -(-n // 10))          # at most 10 x 10 tiles: small graphs, fast tests
    a = spd(np.random.default_rng(seed), n)
    (got,) = run(kernel("spd_inverse"), a, chunks=chunk)
    ref = np.linalg.inv(a)
    tol = 100 * n * np.finfo(float).eps * np.linalg.cond(a)
    assert np.linalg.norm(got - ref) <= tol * np.linalg.norm(ref)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(2, 60), chunk=st.integers(2, 30), rhs=st.integers(1, 20), seed=st.integers(0, 2 ** 16))
def test_cholesky_solve_against_scipy(n, chunk, rhs, seed):
    import scipy.linalg as sl
    chunk = max(chunk, -(-n // 10))
    rng = np.random.default_rng(seed)
    a, b = spd(rng, n), rng.standard_normal((n, rhs))
    (got,) = run(kernel("chol_trsm"), a, b, chunks=chunk)
    ref = sl.solve_triangular(np.linalg.cholesky(a), b, lower=True)
    tol = 100 * n * np.finfo(float).eps * np.linalg.cond(a)
    assert np.linalg.norm(got - ref) <= tol * np.linalg.norm(ref)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_precisions(dtype):
    a = spd(np.random.default_rng(5), 30, dtype)
    (got,) = run(kernel("spd_inverse"), a, chunks=8)
    assert got.dtype == dtype
    ref = np.linalg.inv(a.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64))
    tol = 100 * 30 * np.finfo(dtype).eps * np.linalg.cond(a)
    assert np.linalg.norm(got - ref) <= tol * np.linalg.norm(ref)


def test_integers_become_float64():
    a = np.array([[4, 2], [2, 3]])
    (got,) = run(kernel("spd_inverse"), a, chunks=1)
    assert got.dtype == np.float64 and np.allclose(got, np.linalg.inv(a))


def test_tile_cholesky_has_the_textbook_graph():
    """Right-looking tile Cholesky (cholesky_v3) on N x N tiles: N potrf, N(N-1)/2 trsm and one
    syrk/gemm task per trailing lower tile; critical path potrf -> trsm -> syrk per step: 3N - 2."""
    k = kernel("cholesky", "cholesky_v3", contract=False)
    for n_tiles in (1, 2, 4, 6):
        p = k.plan(da.zeros((6 * n_tiles, 6 * n_tiles), chunks=6))
        ops = [t.steps[-1].op for t in p.tasks]
        assert ops.count("potrf") == n_tiles
        assert ops.count("trsm") == n_tiles * (n_tiles - 1) // 2
        assert ops.count("syrk") + ops.count("gemm") == (n_tiles - 1) * n_tiles * (n_tiles + 1) // 6
        assert p.critical_path() == 3 * n_tiles - 2
        assert all(t.target[1] >= t.target[2] for t in p.tasks)          # only the stored triangle


def test_contracted_chains_keep_every_step():
    """Contraction merges a tile's chain of updates: fewer tasks, the same steps, same result; the
    contracted right-looking Cholesky has one task per lower tile."""
    x = da.zeros((48, 48), chunks=8)
    for spec in ("cholesky", "spd_inverse", "trinv", "ltl"):
        full, short = kernel(spec, contract=False).plan(x), kernel(spec).plan(x)
        assert len(short.tasks) < len(full.tasks)
        assert sum(len(t.steps) for t in short.tasks) == sum(len(t.steps) for t in full.tasks)
        assert short.critical_path() <= full.critical_path()
    assert len(kernel("cholesky", "cholesky_v3").plan(x).tasks) == 6 * 7 // 2
    a = spd(np.random.default_rng(11), 37)
    for c in (False, True):
        (got,) = run(kernel("spd_inverse", contract=c), a, chunks=6)
        assert np.allclose(got, np.linalg.inv(a), rtol=0, atol=1e-9 * np.abs(np.linalg.inv(a)).max())


def test_tasks_come_from_the_derived_body():
    k = kernel("spd_inverse", contract=False)
    body = {line.strip() for line in k.ir.doc}
    p = k.plan(da.zeros((40, 40), chunks=10))
    assert {t.text for t in p.tasks} <= body
    assert len({t.text for t in p.tasks}) == len(k.ir.body)            # every statement has tasks


def test_graph_is_lazy_and_keys_are_deterministic():
    a = da.from_array(spd(np.random.default_rng(6), 20), chunks=5)
    x, y = kernel("spd_inverse")(a), kernel("spd_inverse")(a)
    assert x.name == y.name and x.chunks == a.chunks
    assert x.name != kernel("spd_inverse")(a + 1).name


# ---- bad chunking and bad input: works, or says what to change ----

def test_non_square_chunks_are_rechunked():
    a = spd(np.random.default_rng(7), 30)
    x = da.from_array(a, chunks=(8, 12))
    k = kernel("spd_inverse")
    _, _, notes, _ = k.prepare(x)
    assert notes and "rechunk" in notes[0]
    got = k(x).compute(scheduler="threads")
    assert np.allclose(got, np.linalg.inv(a), atol=1e-10)


def test_rhs_chunked_differently_from_the_matrix():
    rng = np.random.default_rng(8)
    a, b = spd(rng, 30), rng.standard_normal((30, 9))
    got = kernel("chol_trsm")(da.from_array(a, chunks=7), da.from_array(b, chunks=(10, 4)))
    ref = np.linalg.solve(np.linalg.cholesky(a), b)
    assert np.allclose(got.compute(scheduler="threads"), ref, atol=1e-10)


def test_numpy_operands_are_accepted():
    a = spd(np.random.default_rng(9), 12)
    assert np.allclose(kernel("spd_inverse")(a, chunks=5).compute(scheduler="threads"), np.linalg.inv(a))


@pytest.mark.parametrize("args, message", [
    ((np.zeros((4, 5)),), "must be square"),
    ((np.zeros(4),), "must be a 2-D array"),
    ((np.zeros((4, 4)), np.zeros((5, 2))), "the sizes must match"),
])
def test_bad_operands_say_what_to_pass(args, message):
    spec = "spd_inverse" if len(args) == 1 else "chol_trsm"
    with pytest.raises(ValueError, match=message):
        kernel(spec)(*[da.from_array(x, chunks=2) for x in args])


def test_wrong_operand_count_and_dtype():
    with pytest.raises(TypeError, match="takes 2 operands"):
        kernel("chol_trsm")(da.zeros((4, 4), chunks=2))
    with pytest.raises(TypeError, match="LAPACK precision"):
        kernel("spd_inverse")(da.from_array(np.array([["a", "b"], ["c", "d"]]), chunks=1))


def test_not_positive_definite_names_the_order():
    a = np.eye(12)
    a[7, 7] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match="leading minor of order 8 is not positive definite"):
        kernel("spd_inverse")(da.from_array(a, chunks=4)).compute(scheduler="threads")


def test_pivoting_across_tiles_is_refused_with_the_reason():
    with pytest.raises(FlameError, match="pivoting across tiles"):
        kernel("lu")
    with pytest.raises(FlameError, match="two dimension classes"):
        kernel("sylvester")
    with pytest.raises(FlameError, match="no spec 'nope'"):
        kernel("nope")
    with pytest.raises(ValueError, match="choose one of spd_inverse_v1"):
        kernel("spd_inverse", 7)


def test_spec_given_as_a_path():
    k = kernel(ROOT / "specs" / "cholesky.yaml", 3)
    a = spd(np.random.default_rng(10), 16)
    assert np.allclose(k(da.from_array(a, chunks=4)).compute(scheduler="threads"), np.linalg.cholesky(a))
