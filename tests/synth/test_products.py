"""Matrix products and Cholesky inputs in a recorded chain: what reaches BLAS/LAPACK.

Regression tests for issue #15 (markov: ``Q = Q @ P`` eight times was twice NumPy's time) and
issue #19 (``X.T @ X``, the Cholesky input copy): every intermediate product is released once
its last reader ran (not held to the end of the group), the gemm gets the values' storage
(no copies), an identity factor costs a copy instead of a gemm, ``X.T @ X`` is one syrk of X's
storage, and ``cholesky`` reads (and copies) only the triangle it factors."""
import types
import weakref

import numpy
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
import flamefuse.synth.translate as translate
from flamefuse.lazy.recorder import RECORDER
from flamefuse.synth import explain
from flamefuse.synth.group import Group

N = 120


@pytest.fixture(autouse=True)
def _fresh():
    explain.reset()
    yield
    RECORDER.flush()


def stochastic(n=N, seed=0):
    p = numpy.random.default_rng(seed).random((n, n)) ** 4
    return p / p.sum(axis=1, keepdims=True)


def test_a_chain_of_products_holds_no_dead_intermediate(monkeypatch):
    """At each product, the results two or more steps back are already freed."""
    results, alive_then = [], []
    put = Group.put

    def spy(self, i, arr, t, form):
        alive_then.append(sum(r() is not None for r in results))
        results.append(weakref.ref(arr))
        return put(self, i, arr, t, form)
    monkeypatch.setattr(Group, "put", spy)
    p = stochastic()
    q, want = np.asarray(p), p
    for _ in range(8):
        q, want = q @ np.asarray(p), want @ p
    got = q.numpy()
    assert numpy.allclose(got, want, rtol=1e-12, atol=1e-15)
    assert len(alive_then) == 8 and max(alive_then) <= 1, alive_then


def test_gemm_gets_the_operands_storage_without_copies(monkeypatch):
    seen = []
    shim = types.SimpleNamespace(**{k: getattr(numpy, k) for k in dir(numpy) if not k.startswith("__")})

    def matmul(a, b, *args, **kwargs):
        seen.append((a, b))
        return numpy.matmul(a, b, *args, **kwargs)
    shim.matmul = matmul
    monkeypatch.setattr(translate, "np", shim)
    p, q0 = stochastic(seed=1), stochastic(seed=2)
    pl = np.asarray(p)
    q = np.asarray(q0) @ pl
    q = q @ pl
    got = q.numpy()
    assert numpy.allclose(got, q0 @ p @ p, rtol=1e-12, atol=1e-15)
    assert len(seen) == 2
    for a, b in seen:
        assert a.flags.c_contiguous or a.flags.f_contiguous
        assert b.flags.c_contiguous or b.flags.f_contiguous
    # the operands in either order (a C-ordered result is matmul(a, b), a Fortran-ordered one
    # matmul(b.T, a.T).T): each is the value's own storage
    assert {numpy.shares_memory(x, p) for x in seen[0]} == {True, False}, "no copy of the inputs"
    assert any(numpy.shares_memory(x, q0) for x in seen[0]), "no copy of the inputs"
    assert any(numpy.shares_memory(x, p) for x in seen[1])


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_identity_factor_is_a_copy_not_a_gemm(monkeypatch, dtype):
    calls = []
    shim = types.SimpleNamespace(**{k: getattr(numpy, k) for k in dir(numpy) if not k.startswith("__")})
    shim.matmul = lambda *a, **k: calls.append(a) or numpy.matmul(*a, **k)
    monkeypatch.setattr(translate, "np", shim)
    p = stochastic(seed=3).astype(dtype)
    left = (np.asarray(numpy.identity(N, dtype)) @ np.asarray(p)).numpy()
    right = (np.asarray(p) @ np.asarray(numpy.eye(N, dtype=dtype))).numpy()
    assert calls == []
    assert left.dtype == right.dtype == dtype
    assert numpy.array_equal(left, p) and numpy.array_equal(right, p)
    assert any("identity matrix: a copy" in line for line in explain.report())


def test_identity_times_a_non_finite_matrix_is_numpys_gemm():
    p = stochastic(seed=4)
    p[5, 7] = numpy.inf
    with numpy.errstate(invalid="ignore"):
        want = numpy.identity(N) @ p
        got = (np.asarray(numpy.identity(N)) @ np.asarray(p)).numpy()
    assert numpy.array_equal(numpy.isnan(got), numpy.isnan(want)) and numpy.isnan(want).any()
    assert numpy.array_equal(got[numpy.isfinite(want)], want[numpy.isfinite(want)])


def test_almost_identity_is_a_product():
    e = numpy.identity(N)
    e[N - 1, 0] = 1e-300
    p = stochastic(seed=5)
    got = (np.asarray(e) @ np.asarray(p)).numpy()
    assert numpy.allclose(got, e @ p, rtol=1e-14, atol=0)
    assert not any("identity" in line for line in explain.report())


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 90), n=st.integers(10, 60), seed=st.integers(0, 2 ** 16),
       fortran=st.booleans(), single=st.booleans())
def test_gram_matrix_is_syrk_exactly_symmetric(m, n, seed, fortran, single):
    dtype = numpy.float32 if single else numpy.float64
    x = numpy.random.default_rng(seed).standard_normal((m, n)).astype(dtype)
    x = numpy.asfortranarray(x) if fortran else x
    xl = np.asarray(x)
    got = (xl.T @ xl).numpy()
    want = x.T @ x
    assert got.dtype == dtype
    assert numpy.array_equal(got, got.T)
    tol = 10 * m * numpy.finfo(dtype).eps * max(1.0, numpy.abs(want).max())
    assert numpy.abs(got - want).max() <= tol


def test_syrk_reads_x_storage_and_fills_only_the_lower_triangle():
    x = numpy.random.default_rng(6).standard_normal((50, 30))
    c = translate.syrk(x)
    assert c.flags.f_contiguous
    assert not numpy.triu(c, 1).any()
    assert numpy.allclose(numpy.tril(c), numpy.tril(x.T @ x), rtol=1e-13, atol=1e-12)
    c2 = translate.syrk(numpy.asfortranarray(x))
    assert numpy.array_equal(numpy.tril(c2), numpy.tril(c))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(10, 70), seed=st.integers(0, 2 ** 16), fortran=st.booleans(),
       lower=st.booleans(), single=st.booleans())
def test_cholesky_reads_only_its_triangle(n, seed, fortran, lower, single):
    """A non-symmetric input: the other triangle is noise NumPy and SciPy never read."""
    dtype = numpy.float32 if single else numpy.float64
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    a = x @ x.T + n * numpy.eye(n)
    noise = numpy.triu(rng.standard_normal((n, n)), 1)
    a = (a + (noise if lower else noise.T)).astype(dtype)
    a = numpy.asfortranarray(a) if fortran else a
    want = scipy.linalg.cholesky(a, lower=lower)
    got = sl.cholesky(np.asarray(a), lower=lower).numpy()
    assert got.dtype == dtype
    sym = numpy.tril(a) + numpy.tril(a, -1).T if lower else numpy.triu(a) + numpy.triu(a, 1).T
    tol = 50 * n * numpy.finfo(dtype).eps * numpy.linalg.cond(sym.astype(float)) * numpy.abs(want).max()
    assert numpy.abs(got - want).max() <= tol
    assert not (numpy.triu(got, 1) if lower else numpy.tril(got, -1)).any()
    assert numpy.array_equal(numpy.asarray(a), a), "the input is not changed"


def test_cholesky_of_a_c_ordered_input_copies_only_the_lower_triangle(monkeypatch):
    copied = []
    real = translate.copy_lower
    monkeypatch.setattr(translate, "copy_lower", lambda d, s: copied.append((d, s)) or real(d, s))
    x = numpy.random.default_rng(7).standard_normal((N, N))
    a = x @ x.T + N * numpy.eye(N)
    L = np.linalg.cholesky(np.asarray(a)).numpy()
    assert numpy.allclose(L, numpy.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    assert len(copied) == 1 and numpy.shares_memory(copied[0][1], a) and copied[0][0].flags.f_contiguous


@settings(max_examples=20, deadline=None)
@given(n=st.integers(10, 50), seed=st.integers(0, 2 ** 16), lower=st.booleans(), keep=st.booleans(),
       which=st.sampled_from(["cholesky", "inv", "solve"]))
def test_gram_matrix_consumed_without_mirroring(n, seed, lower, keep, which):
    """``cholesky / inv / solve (X.T @ X + ...)`` read the syrk's lower triangle as it is; the
    results are SciPy's / NumPy's, and a kept Gram matrix is exactly symmetric."""
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((2 * n, n))
    b = rng.standard_normal(n)
    xl = np.asarray(x)
    g = xl.T @ xl
    a = x.T @ x
    if which == "cholesky":
        got, want = sl.cholesky(g, lower=lower), scipy.linalg.cholesky(a, lower=lower)
    elif which == "inv":
        got, want = np.linalg.inv(g), numpy.linalg.inv(a)
    else:
        got, want = np.linalg.solve(g, np.asarray(b)), numpy.linalg.solve(a, b)
    if not keep:
        del g                                  # dead: factored in place
    got = got.numpy()
    kept = g.numpy() if keep else None
    tol = 100 * n * numpy.finfo(float).eps * numpy.linalg.cond(a) * max(1.0, numpy.abs(want).max())
    assert numpy.abs(got - want).max() <= tol
    if keep:
        assert numpy.array_equal(kept, kept.T)
        assert numpy.allclose(kept, a, rtol=1e-12, atol=1e-10 * numpy.abs(a).max())


@pytest.mark.parametrize("fortran", [False, True])
def test_gram_matrix_syrk_reads_x_in_place(monkeypatch, fortran):
    """One SciPy BLAS syrk on X's storage (not NumPy's matmul: its OpenBLAS's spinning threads
    slowed the kernel that follows 3x, issue #19)."""
    import scipy.linalg.blas as blas
    passed = []
    real = blas.get_blas_funcs

    def spy(names, arrays=(), *args, **kwargs):
        f = real(names, arrays, *args, **kwargs)
        return lambda alpha, a, **kw: passed.append(a) or f(alpha, a, **kw)
    monkeypatch.setattr(blas, "get_blas_funcs", spy)
    x = numpy.random.default_rng(8).standard_normal((2 * N, N))
    x = numpy.asfortranarray(x) if fortran else x
    xl = np.asarray(x)
    got = (xl.T @ xl).numpy()
    assert len(passed) == 1 and numpy.shares_memory(passed[0], xl._base.data), "syrk reads X's storage, no copy"
    assert passed[0].flags.f_contiguous
    assert numpy.allclose(got, x.T @ x, rtol=1e-12, atol=1e-10)


def _powers(x, p, k, keep=None):
    """``Q = x; Q = Q @ P`` k times, P a pending lazy matrix (recorded, not run eagerly); the
    intermediate results appended to ``keep`` when given (the script still sees them)."""
    P, q = np.asarray(p) * 1.0, np.asarray(x)
    for _ in range(k):
        q = q @ P
        if keep is not None:
            keep.append(q)
    return q.numpy()


def _sequential(x, p, k):
    for _ in range(k):
        x = x @ p
    return x


def _squarings():
    return [line for line in explain.report() if "by squaring" in line]


def test_products_by_one_nonnegative_matrix_run_as_its_power_by_squaring(monkeypatch):
    """markov (issue #15): ``Q = identity; Q = Q @ P`` eight times is P^8: three gemms, not seven."""
    import flamefuse.synth.power as power
    calls = []
    shim = types.SimpleNamespace(**{k: getattr(numpy, k) for k in dir(numpy) if not k.startswith("__")})
    shim.matmul = lambda *a, **k: calls.append(a) or numpy.matmul(*a, **k)
    monkeypatch.setattr(power, "np", shim)
    p = stochastic(seed=9)
    got = _powers(numpy.identity(N), p, 8)
    assert numpy.allclose(got, _sequential(numpy.identity(N), p, 8), rtol=1e-13, atol=0)
    assert len(calls) == 3 and _squarings() == [
        f"linalg: 8 products X @ P @ ... @ P of nonnegative matrices: P^8 by squaring, 3 gemms for 7 ({N} x {N})"]
    x = numpy.random.default_rng(10).random((N // 2, N))
    got = _powers(x, p, 5)                     # X @ P^5: P^2, P^4, P^5 and X @ P^5
    assert numpy.allclose(got, _sequential(x, p, 5), rtol=1e-13, atol=0) and len(calls) == 7


@pytest.mark.parametrize("case", ["negative", "kept", "overflow", "short"])
def test_other_chains_of_products_run_product_by_product(case):
    p, x, k = stochastic(seed=11), numpy.identity(N), 8
    if case == "negative":
        p[3, 4] = -1e-3
    if case == "overflow":                    # P^8 overflows where x @ P @ ... @ P does not
        p, x = p * 1e40, numpy.full((2, N), 1e-200)
    if case == "short":                       # X @ P @ P @ P: squaring saves no gemm
        x, k = numpy.full((2, N), 0.5), 3
    keep = [] if case == "kept" else None
    with numpy.errstate(over="ignore"):
        got = _powers(x, p, k, keep)
    assert numpy.allclose(got, _sequential(x, p, k), rtol=1e-12, atol=0)
    assert _squarings() == []


def test_is_identity_is_exact():
    from flamefuse.synth.structure import is_identity
    e = numpy.identity(5)
    assert is_identity(e) and is_identity(e.astype(numpy.float32)) and is_identity(e.T[::1])
    for i, j, x in [(0, 0, 2.0), (4, 4, numpy.nan), (3, 1, numpy.nan), (1, 3, 1e-300), (0, 4, numpy.inf)]:
        f = e.copy()
        f[i, j] = x
        assert not is_identity(f), (i, j, x)
    assert not is_identity(numpy.ones((2, 3))) and not is_identity(numpy.identity(3, dtype=numpy.int64))
