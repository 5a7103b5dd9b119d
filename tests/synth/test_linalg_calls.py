"""Recorded numpy.linalg / scipy.linalg calls give NumPy's and SciPy's results (values, form,
dtype, errors), and run as the library chains they match."""
import numpy
import pytest
import scipy.linalg

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
from flamefuse.lazy.recorder import RECORDER
from flamefuse.synth import explain

N = 130


def spd(n=N, seed=0, dtype=numpy.float64):
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    return (x @ x.T + n * numpy.eye(n)).astype(dtype)


def close(got, want, a, dtype=numpy.float64):
    """Agreement within a tolerance scaled to the conditioning of a."""
    got = numpy.asarray(got)
    eps = numpy.finfo(dtype).eps
    tol = 50 * a.shape[0] * eps * numpy.linalg.cond(a) * max(1.0, numpy.abs(want).max())
    assert got.shape == numpy.shape(want)
    assert numpy.abs(got - want).max() <= tol, numpy.abs(got - want).max()


@pytest.fixture(autouse=True)
def _fresh():
    explain.reset()
    yield
    RECORDER.flush()


def spd_inverse(a):
    L = np.linalg.cholesky(a)
    Li = np.linalg.inv(L)
    return Li.T @ Li


def test_spd_inverse_written_with_numpy_fuses_after_the_cholesky():
    """cholesky runs at its call (where NumPy raises); inv of its factor (a nonzero diagonal:
    cannot raise) and the product fuse into one kernel."""
    a = spd()
    c = spd_inverse(np.asarray(a)).numpy()
    close(c, numpy.linalg.inv(a), a)
    assert numpy.array_equal(c, c.T), "the upper triangle is filled in"
    lines = explain.report()
    assert any(line.startswith("linalg: chol as LAPACK calls (fused with nothing: potrf)") for line in lines), lines
    assert any(line.startswith("linalg: trinv -> ltl as trinv_ltl variant") for line in lines), lines


def test_live_intermediates_keep_numpy_values():
    a = spd(seed=1)
    L = np.linalg.cholesky(np.asarray(a))
    Li = np.linalg.inv(L)
    C = Li.T @ Li
    want_l = numpy.linalg.cholesky(a)
    close(C.numpy(), numpy.linalg.inv(a), a)
    close(L.numpy(), want_l, a)
    assert not numpy.triu(L.numpy(), 1).any(), "zeros above the Cholesky factor"
    close(Li.numpy(), numpy.linalg.inv(want_l), a)
    assert not numpy.triu(Li.numpy(), 1).any()


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_dtype_is_preserved(dtype):
    a = spd(seed=2, dtype=dtype)
    c = spd_inverse(np.asarray(a)).numpy()
    assert c.dtype == dtype
    close(c, numpy.linalg.inv(a.astype(float)), a.astype(float), dtype)


def test_gaussian_process_mean_with_scipy():
    a, rng = spd(seed=3), numpy.random.default_rng(3)
    y, ks = rng.standard_normal(N), rng.standard_normal((40, N))

    def gp(k, y, ks, lib):
        L = lib.cholesky(k, lower=True)
        v = lib.solve_triangular(L, y, lower=True)
        alpha = lib.solve_triangular(L.T, v, lower=False)
        return ks @ alpha
    got = gp(np.asarray(a), np.asarray(y), np.asarray(ks), sl)
    close(numpy.asarray(got), gp(a, y, ks, scipy.linalg), a)
    lines = explain.report()
    assert any(line.startswith("linalg: chol as LAPACK calls (fused with nothing: potrf)") for line in lines), lines


def test_upper_cholesky_and_transposed_solves():
    a, rng = spd(seed=4), numpy.random.default_rng(4)
    b = rng.standard_normal((N, 7))
    U = sl.cholesky(np.asarray(a))                      # SciPy's default: upper
    x = sl.solve_triangular(U, np.asarray(b), trans="T")   # U^T x = b
    z = sl.solve_triangular(U, x)                          # U z = x
    want_u = scipy.linalg.cholesky(a)
    close(U.numpy(), want_u, a)
    close(z.numpy(), numpy.linalg.solve(a, b), a)


def test_cholesky_then_many_right_hand_sides():
    a, b = spd(seed=5), numpy.random.default_rng(5).standard_normal((N, 64))

    def run(a, b):
        L = sl.cholesky(a, lower=True)
        return sl.solve_triangular(L, b, lower=True)
    close(run(np.asarray(a), np.asarray(b)).numpy(), run(a, b) if False else
          scipy.linalg.solve_triangular(numpy.linalg.cholesky(a), b, lower=True), a)
    # a lone solve with many right-hand sides is trtrs (the kernel measured no faster at n = 500-2000)
    assert any(line.startswith("linalg: trsm as LAPACK calls (fused with nothing: trtrs")
               for line in explain.report()), explain.report()


def test_cho_factor_cho_solve_lu_factor_lu_solve():
    a, rng = spd(seed=6), numpy.random.default_rng(6)
    g = rng.standard_normal((N, N)) + N * numpy.eye(N)
    b = rng.standard_normal(N)
    for lower in (False, True):
        cf = sl.cho_factor(np.asarray(a), lower=lower)
        close(sl.cho_solve(cf, np.asarray(b)).numpy(), numpy.linalg.solve(a, b), a)
    lu = sl.lu_factor(np.asarray(g))
    x = sl.lu_solve(lu, np.asarray(b))
    close(x.numpy(), numpy.linalg.solve(g, b), g)
    want_lu, want_piv = scipy.linalg.lu_factor(g)
    close(lu[0].numpy(), want_lu, g)
    assert numpy.array_equal(lu[1].numpy(), want_piv)


def test_solve_and_inv_by_structure():
    a, rng = spd(seed=7), numpy.random.default_rng(7)
    g = rng.standard_normal((N, N)) + N * numpy.eye(N)
    low = numpy.tril(g)
    b = rng.standard_normal((N, 3))
    for m in (a, g, low, low.T):
        close(np.linalg.solve(np.asarray(m), np.asarray(b)).numpy(), numpy.linalg.solve(m, b), m)
        close(np.linalg.inv(np.asarray(m)).numpy(), numpy.linalg.inv(m), m)
        close(sl.inv(np.asarray(m)).numpy(), numpy.linalg.inv(m), m)
    lines = " ".join(explain.report())
    assert "trinv" in lines and "lu -> trinv_unit -> triuinv -> ul" in lines and "chol -> trsm" in lines


def test_symmetric_indefinite_inverse_falls_back_to_lu():
    rng = numpy.random.default_rng(8)
    x = rng.standard_normal((N, N))
    a = x + x.T                                        # symmetric, indefinite
    close(np.linalg.inv(np.asarray(a)).numpy(), numpy.linalg.inv(a), a)


def test_linalg_errors_where_numpy_raises():
    a = -spd(seed=9)
    with pytest.raises(numpy.linalg.LinAlgError):
        np.linalg.cholesky(np.asarray(a)).numpy()
    s = numpy.ones((N, N))
    with pytest.raises(numpy.linalg.LinAlgError):
        np.linalg.inv(np.asarray(s)).numpy()
    with pytest.raises(numpy.linalg.LinAlgError):
        np.linalg.cholesky(np.ones((3, 4)))


def test_ridge_covariance_is_symmetric_and_uses_the_spd_inverse():
    rng = numpy.random.default_rng(10)
    x = rng.standard_normal((2 * N, N))
    xl = np.asarray(x)
    cov = 0.5 * np.linalg.inv(xl.T @ xl + 3.0 * np.asarray(numpy.eye(N)))
    want = 0.5 * numpy.linalg.inv(x.T @ x + 3.0 * numpy.eye(N))
    close(cov.numpy(), want, x.T @ x + 3.0 * numpy.eye(N))
    lines = explain.report()
    assert any("syrk (the lower triangle)" in line for line in lines) and any("spd_inverse" in line for line in lines), lines


def test_small_inputs_run_in_numpy_at_once():
    a = spd(n=5)
    before = RECORDER.ops[:]
    r = np.linalg.cholesky(np.asarray(a))
    assert RECORDER.ops == before
    assert numpy.array_equal(numpy.asarray(r), numpy.linalg.cholesky(a))


def _try_cholesky(a):
    try:
        np.linalg.cholesky(a)
    except numpy.linalg.LinAlgError:
        return "caught"
    return "not caught"


def _cholesky(a):
    return np.linalg.cholesky(a)


def test_a_call_that_may_raise_runs_at_its_own_statement():
    """``cholesky`` runs at its call, so its error is raised there: inside the script's own ``try``,
    also one in a caller (which a look at the innermost frame did not see), and never later
    inside another call's ``try``; results of earlier calls are kept."""
    from flamefuse.lazy.recorder import STATS
    bad = np.asarray(-spd(seed=11))
    assert _try_cholesky(bad) == "caught"
    try:
        _cholesky(bad)
        where = "not raised"
    except numpy.linalg.LinAlgError:
        where = "raised in the caller"
    assert where == "raised in the caller"
    a = spd(seed=12)
    ainv = np.linalg.inv(np.asarray(a))
    assert _try_cholesky(bad) == "caught"
    close(ainv.numpy(), numpy.linalg.inv(a), a)
    now = STATS["linalg_now"]
    L = np.linalg.cholesky(np.asarray(spd(seed=13)))
    assert STATS["linalg_now"] == now + 1 and not RECORDER.ops
    close(L.numpy(), numpy.linalg.cholesky(spd(seed=13)), spd(seed=13))


def test_calls_that_share_no_operand_are_not_one_kernel():
    """Two triangular solves of unrelated matrices stay two kernels (#27 item 1: an LU and an
    unrelated solve fused as one lu_trsm loop applied the row swaps to the solve)."""
    from flamefuse.synth.segment import Segment, connected
    from flamefuse.synth.chain import Step
    a, g = spd(seed=20), numpy.random.default_rng(20).standard_normal((N, N))
    l1, l2 = numpy.linalg.cholesky(a), numpy.tril(g) + N * numpy.eye(N)
    b1, b2 = numpy.random.default_rng(21).standard_normal((2, N, 3))
    x = sl.solve_triangular(np.asarray(l1), np.asarray(b1), lower=True, check_finite=False)
    y = sl.solve_triangular(np.asarray(l2), np.asarray(b2), lower=True, check_finite=False)
    close(x.numpy(), scipy.linalg.solve_triangular(l1, b1, lower=True), a)
    close(y.numpy(), scipy.linalg.solve_triangular(l2, b2, lower=True), l2)
    assert any("not connected by a shared operand" in line for line in explain.report()), explain.report()
    seg = Segment(steps=[Step("lu", (("A", "A"),)), Step("trsm", (("L", "C"), ("B", "D"))),
                         Step("trsm_unit", (("L", "A"), ("B", "B"))), Step("trsm", (("L", "A"), ("B", "E")))])
    unit = lambda k: (None, k, 1, ())
    assert not connected(seg, [unit(0), unit(1)])          # no shared operand
    assert connected(seg, [unit(0), unit(2)])              # lu_solve: the swaps belong to it
    assert not connected(seg, [unit(0), unit(3)])          # a plain solve with the LU factor: no swaps


def test_lu_factor_of_a_singular_matrix_warns_and_returns_the_factors():
    from scipy.linalg import LinAlgWarning
    g = numpy.random.default_rng(22).standard_normal((N, N))
    g[:, 5] = 0
    with pytest.warns(LinAlgWarning) as warned:
        lu, piv = sl.lu_factor(np.asarray(g))
    assert warned[0].filename == __file__, "at the script's line"
    want_lu, want_piv = scipy.linalg.lu_factor(g)
    assert numpy.array_equal(piv.numpy(), want_piv)
    assert numpy.allclose(lu.numpy(), want_lu, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lib", ["numpy", "scipy"])
def test_singular_triangular_solve_raises_as_the_library(lib):
    low = numpy.tril(numpy.random.default_rng(23).standard_normal((N, N))) + N * numpy.eye(N)
    low[7, 7] = 0
    b = numpy.ones(N)
    with pytest.raises(numpy.linalg.LinAlgError):
        if lib == "numpy":
            np.linalg.solve(np.asarray(low), np.asarray(b))
        else:
            sl.solve_triangular(np.asarray(low), np.asarray(b), lower=True)
    bad = low.copy()
    bad[3, 1] = numpy.inf
    with pytest.raises(ValueError):                    # check_finite, at the call
        sl.solve_triangular(np.asarray(bad), np.asarray(b), lower=True)


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_reads_the_factor_in_place(monkeypatch, lower):
    """The factor of ``cho_factor`` (SciPy's default upper one too: the transposed view of a
    column-major lower factor) is read where it lies by each ``cho_solve``; an upper factor was
    copied whole at every solve (ADMM's 20 solves: 1.4x slower than SciPy)."""
    import flamefuse.synth.direct as direct
    import flamefuse.synth.group as group
    buffers = []
    real, real_trtrs = group.run_segment, direct._trtrs

    def spy(seg, why):
        buffers.append(list(seg.buffers.values()))
        return real(seg, why)

    def spy_trtrs(call, lmat, b, trans):       # the warm path (a plan of flamefuse.synth.direct)
        buffers.append([lmat])
        return real_trtrs(call, lmat, b, trans)
    monkeypatch.setattr(group, "run_segment", spy)
    monkeypatch.setattr(direct, "_trtrs", spy_trtrs)
    monkeypatch.setattr(direct, "PLANS", {})
    a, rng = spd(seed=9), numpy.random.default_rng(9)
    cf = sl.cho_factor(np.asarray(a), lower=lower)
    RECORDER.flush()
    factor = cf[0]._base.data
    for k in range(2):                          # through the group, then through the plan
        b = rng.standard_normal(N)
        buffers.clear()
        x = sl.cho_solve(cf, np.asarray(b), check_finite=False)
        close(x.numpy(), numpy.linalg.solve(a, b), a)
        assert buffers and all(any(numpy.shares_memory(arr, factor) for arr in arrs) for arrs in buffers), buffers
    assert direct.STATS["hits"]


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_slogdet_and_det_of_an_spd_matrix_from_its_cholesky_factor(dtype):
    """``slogdet`` / ``det`` of a symmetric positive definite matrix run as a Cholesky (half of
    NumPy's LU flops) and give NumPy's values and types; an indefinite, a general and a
    non-symmetric matrix whose lower triangle is positive definite get NumPy's own."""
    a = spd(seed=11, dtype=dtype)
    rng = numpy.random.default_rng(11)
    g = rng.standard_normal((N, N)).astype(dtype)
    lower_pd = numpy.tril(a) + numpy.triu(g, 1)          # cholesky reads only the lower triangle
    indefinite = a - 2 * N * numpy.eye(N, dtype=dtype)
    for m in (a, g, lower_pd, indefinite, a / 100):
        want, got = numpy.linalg.slogdet(m), np.linalg.slogdet(np.asarray(m))
        assert type(got) is type(want) and type(got.sign) is type(want.sign)
        assert got.sign == want.sign
        eps = numpy.finfo(dtype).eps
        assert abs(got.logabsdet - want.logabsdet) <= 50 * N * eps * max(1.0, abs(want.logabsdet))
        d, dw = np.linalg.det(np.asarray(m)), numpy.linalg.det(m)
        assert type(d) is type(dw)
        assert (numpy.isinf(d) and numpy.isinf(dw)) or abs(d - dw) <= 1e3 * N * eps * abs(dw)
    explain.reset()
    np.linalg.slogdet(np.asarray(a))
    assert any("[numpy.linalg.slogdet]" in line and line.startswith("linalg: chol as")
               for line in explain.report()), explain.report()


def test_calls_not_recorded_run_as_the_library_without_warnings():
    """``eigh``, ``svd``, ``qr``, ``pinv``, ``lstsq``, ``eigvalsh``, ``norm`` (NumPy and SciPy) in a
    loop: the library's values, and not one warning (no warning storm)."""
    import warnings
    a, rng = spd(n=40, seed=12), numpy.random.default_rng(12)
    g, b = rng.standard_normal((40, 40)), rng.standard_normal(40)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            la, ga, ba = np.asarray(a), np.asarray(g), np.asarray(b)
            close(np.linalg.eigh(la)[0], numpy.linalg.eigh(a)[0], a)
            close(np.linalg.svd(ga)[1], numpy.linalg.svd(g)[1], g)
            close(numpy.abs(np.linalg.qr(ga)[1]), numpy.abs(numpy.linalg.qr(g)[1]), g)
            close(np.linalg.pinv(ga), numpy.linalg.pinv(g), g)
            close(np.linalg.lstsq(ga, ba, rcond=None)[0], numpy.linalg.lstsq(g, b, rcond=None)[0], g)
            close(np.linalg.norm(ga), numpy.linalg.norm(g), g)
            close(sl.eigh(la)[0], scipy.linalg.eigh(a)[0], a)
            close(sl.svd(ga)[1], scipy.linalg.svd(g)[1], g)
            close(sl.pinv(ga), scipy.linalg.pinv(g), g)
            close(sl.lstsq(ga, ba)[0], scipy.linalg.lstsq(g, b)[0], g)
    assert not caught, [str(w.message) for w in caught]


def test_a_lone_solve_with_one_right_hand_side_is_lapacks_trtrs():
    """A triangular solve fused with nothing and with a vector right-hand side runs as LAPACK's
    trtrs (the blocked kernel made 2 n / nb BLAS calls: three times as long at n = 1000); with a
    matrix of right-hand sides too (the kernel measured no faster at n = 500-2000, one thread)."""
    a, rng = spd(seed=13), numpy.random.default_rng(13)
    lo = numpy.linalg.cholesky(a)
    b, B = rng.standard_normal(N), rng.standard_normal((N, 7))
    L = np.asarray(lo)
    for rhs, trans in ((b, 0), (b, 1), (B, 0)):
        explain.reset()
        x = sl.solve_triangular(L, np.asarray(rhs), lower=True, trans=trans, check_finite=False).numpy()
        close(x, scipy.linalg.solve_triangular(lo, rhs, lower=True, trans=trans), lo)
        lines = explain.report()
        want = "as LAPACK calls (one right-hand side" if rhs.ndim == 1 else "as LAPACK calls (fused with nothing: trtrs"
        assert any(want in line for line in lines), lines


def test_a_lone_cholesky_is_potrf_without_a_search(monkeypatch):
    """A Cholesky fused with nothing runs as LAPACK's potrf, decided before any search: a cold run
    does not search, derive or compile a kernel it will not use."""
    from flamefuse.synth import kernels
    built = []
    real = kernels._build
    monkeypatch.setattr(kernels, "_MEMO", {})
    monkeypatch.setattr(kernels, "_build", lambda chain, name: built.append(chain.ops) or real(chain, name))
    a = spd(seed=14, dtype=numpy.float32)
    L = np.linalg.cholesky(np.asarray(a)).numpy()
    close(L, numpy.linalg.cholesky(a), a, numpy.float32)
    assert L.dtype == numpy.float32 and not built, built
    with pytest.raises(numpy.linalg.LinAlgError, match="not positive definite"):
        np.linalg.cholesky(np.asarray(-a))
    assert not built, built


def test_a_call_with_a_small_result_runs_at_once():
    """A solve whose result is smaller than eager_below (one right-hand side) runs at the call, so
    the small element-wise code around it runs in NumPy at once instead of waiting for a flush
    that runs it as a kernel (ADMM's loop of cho_solve: twice NumPy's time at n = 500)."""
    a, rng = spd(seed=15), numpy.random.default_rng(15)
    b, B = rng.standard_normal(N), rng.standard_normal((N, N))
    cf = sl.cho_factor(np.asarray(a))
    np.configure(eager_below=1000)          # the matrix is recorded, a vector of N is small
    try:
        RECORDER.flush()
        x = sl.cho_solve(cf, np.asarray(b), check_finite=False)
        assert not RECORDER.ops, RECORDER.ops
        y = sl.cho_solve(cf, np.asarray(B), check_finite=False)      # a large result waits
        assert RECORDER.ops
        close(x.numpy(), numpy.linalg.solve(a, b), a)
        close(y.numpy(), numpy.linalg.solve(a, B), a)
    finally:
        np.configure(eager_below=100)


def test_factor_buffers_are_reused_from_the_pool():
    """The buffer a Cholesky factors in comes from the run-time's pool and goes back to it when
    the script drops the factor: the next Cholesky of that size writes no freshly mapped memory
    (its page faults cost 0.3-0.4 ms per 8 MB), and the values stay NumPy's."""
    import gc

    from flamefuse.runtime import pool
    a = spd(n=200, seed=16)
    A = np.asarray(a)
    want = numpy.linalg.cholesky(a)
    x = np.linalg.cholesky(A)
    RECORDER.flush()
    del x
    gc.collect()
    before = pool.STATS["reused"]
    y = np.linalg.cholesky(A)
    got = numpy.array(y.numpy())
    close(got, want, a)
    assert numpy.array_equal(got, numpy.tril(got)), "zeros above the factor, as NumPy's"
    assert pool.STATS["reused"] > before
