"""Decisions that cost time at small n (issue 27 item 10, n = 500): what runs at once, what is
recorded, and the NumPy paths of the triangle passes and structure checks.

No timings: each test checks the decision (what the recorder holds, what ran) and the values
against NumPy's."""
import numpy
import pytest

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
from flamefuse.lazy.products import CACHED_MATRIX_BYTES
from flamefuse.lazy.recorder import RECORDER
from flamefuse.synth import fill, structure


@pytest.fixture
def default_eager():
    """The recorder's default ``eager_below`` (the synth tests record from 100 elements up)."""
    RECORDER.flush()
    np.configure(eager_below=1 << 15)
    yield
    RECORDER.flush()
    np.configure(eager_below=100)


def test_matvec_of_computed_operands_and_a_cached_matrix_runs_at_once(default_eager):
    """``Ks @ alpha`` (200 x 300, both computed) is NumPy's gemv at once, not a recorded product
    flushed on its own at the next read."""
    rng = numpy.random.default_rng(0)
    a_, x_ = rng.standard_normal((200, 300)), rng.standard_normal(300)
    r = np.asarray(a_) @ np.asarray(x_)
    assert RECORDER.ops == []
    numpy.testing.assert_array_equal(numpy.asarray(r), a_ @ x_)
    s = np.asarray(x_[:200]) @ np.asarray(a_)          # vector @ matrix: the same rule
    assert RECORDER.ops == []
    numpy.testing.assert_array_equal(numpy.asarray(s), x_[:200] @ a_)


def test_matvec_of_a_matrix_larger_than_the_cache_is_recorded(default_eager):
    """A matrix past ``CACHED_MATRIX_BYTES`` is recorded: two products that share it may still
    become one loop nest reading it once."""
    n = int((CACHED_MATRIX_BYTES // 8) ** 0.5) + 8
    rng = numpy.random.default_rng(1)
    a_, x_ = rng.standard_normal((n, n)), rng.standard_normal(n)
    r = np.asarray(a_) @ np.asarray(x_)
    assert [op.kind for op in RECORDER.ops] == ["product"]
    numpy.testing.assert_allclose(numpy.asarray(r), a_ @ x_, rtol=1e-12)


def test_matvec_of_a_matrix_a_linalg_call_computes_is_a_product_not_a_row_sum(default_eager):
    """``K @ v`` with K still to be computed by a recorded product of matrices: a gemv (a
    recorded ``product``), not a multiply and a row sum over all of K (there is no element-wise
    kernel making K to fuse them with)."""
    rng = numpy.random.default_rng(2)
    p_, q_, v_ = rng.standard_normal((300, 300)), rng.standard_normal((300, 300)), rng.standard_normal(300)
    k = np.asarray(p_) @ np.asarray(q_)
    r = k @ np.asarray(v_)
    assert [op.kind for op in RECORDER.ops] == ["linalg", "product"]
    numpy.testing.assert_allclose(numpy.asarray(r), (p_ @ q_) @ v_, rtol=1e-12)


def test_matvec_of_an_elementwise_result_is_still_a_fused_row_sum(default_eager):
    rng = numpy.random.default_rng(3)
    a_, v_ = rng.standard_normal((300, 300)), rng.standard_normal(300)
    r = (np.asarray(a_) * 2.0) @ np.asarray(v_)
    assert [op.kind for op in RECORDER.ops] == ["ew", "ew", "reduce"]
    numpy.testing.assert_allclose(numpy.asarray(r), (a_ * 2.0) @ v_, rtol=1e-12)


@pytest.fixture
def numpy_paths(monkeypatch):
    """The NumPy paths of fill and structure (a process without Numba while kernels compile in
    the background)."""
    monkeypatch.setattr(fill, "_numpy_now", lambda: True)
    monkeypatch.setattr(structure, "_numpy_now", lambda: True)


SIZES = [1, 2, 3, 63, 64, 65, 127, 128, 129, 300]


@pytest.mark.parametrize("n", SIZES)
def test_numpy_fill_upper_and_copy_lower(numpy_paths, n):
    rng = numpy.random.default_rng(n)
    a_ = rng.standard_normal((n, n))
    f = numpy.asfortranarray(a_.copy())
    fill.fill_upper(f, False)
    numpy.testing.assert_array_equal(f, numpy.tril(a_))
    f = numpy.asfortranarray(a_.copy())
    fill.fill_upper(f, True)
    numpy.testing.assert_array_equal(f, numpy.tril(a_) + numpy.tril(a_, -1).T)
    c = numpy.asarray(a_.copy())                        # a C-ordered one too
    fill.fill_upper(c, True)
    numpy.testing.assert_array_equal(c, numpy.tril(a_) + numpy.tril(a_, -1).T)
    d = numpy.full((n, n), 7.0, order="F")
    fill.copy_lower(d, a_)                              # the strict upper triangle left as it is
    numpy.testing.assert_array_equal(d, numpy.tril(a_) + numpy.triu(numpy.full((n, n), 7.0), 1))


def _loop_symmetric(b):
    n = b.shape[0]
    return all(b[i, j] == b[j, i] for j in range(n) for i in range(j))


def _loop_lower(b):
    n = b.shape[0]
    return all(b[i, j] == 0 for j in range(n) for i in range(j))


@pytest.mark.parametrize("n", SIZES)
def test_numpy_structure_checks_answer_as_the_loops(numpy_paths, n):
    """Blocked NumPy checks: the same answers as the element loops, a NaN on the diagonal
    (never compared) and off it (unequal, nonzero) included."""
    rng = numpy.random.default_rng(n)
    for trial in range(12):
        x = rng.standard_normal((n, n))
        for a_ in (x + x.T, numpy.tril(x), x, numpy.asfortranarray(x + x.T), numpy.triu(x).T.copy()):
            b = a_.copy()
            if trial % 3 == 1:
                i, j = rng.integers(0, n, 2)
                b[i, j] = numpy.nan if trial % 2 else b[i, j] + 1.0
            if trial % 3 == 2:
                b[n // 2, n // 2] = numpy.nan
            assert structure.is_symmetric(b) == _loop_symmetric(b)
            assert structure.is_lower(b) == _loop_lower(b)


def test_axis_reduction_of_a_computed_matrix_with_a_small_result_is_numpys_at_once(default_eager):
    """``X.mean(axis=0)`` of a computed X: NumPy's reduction at once (its bits), nothing recorded;
    ``X - X.mean(axis=0)`` records only the subtraction."""
    rng = numpy.random.default_rng(4)
    x_ = rng.standard_normal((400, 300)) + 1.0
    x = np.asarray(x_)
    for got, want in ((x.mean(axis=0), x_.mean(axis=0)), (x.sum(axis=1), x_.sum(axis=1)),
                      (np.max(x, axis=0), numpy.max(x_, axis=0))):
        assert RECORDER.ops == []
        numpy.testing.assert_array_equal(numpy.asarray(got), want)
    xc = x - x.mean(axis=0)
    assert [op.kind for op in RECORDER.ops] == ["ew"]
    numpy.testing.assert_array_equal(numpy.asarray(xc), x_ - x_.mean(axis=0))


def test_axis_reduction_of_a_pending_matrix_is_recorded(default_eager):
    rng = numpy.random.default_rng(5)
    x_ = rng.standard_normal((400, 300))
    r = (np.asarray(x_) * 2.0).sum(axis=0)
    assert [op.kind for op in RECORDER.ops] == ["ew", "reduce"]
    numpy.testing.assert_allclose(numpy.asarray(r), (x_ * 2.0).sum(axis=0), rtol=1e-12)


def _spd(n=120, seed=6):
    x = numpy.random.default_rng(seed).standard_normal((n, n))
    return x @ x.T + n * numpy.eye(n)


def _warm_factor(a_, factor):
    """The factor of a warm call (the first call of its structure learns the plan)."""
    factor(np.asarray(a_))
    return factor(np.asarray(a_))


FACTORS = {"numpy": lambda a: np.linalg.cholesky(a),
           "scipy lower": lambda a: sl.cholesky(a, lower=True),
           "scipy upper": lambda a: sl.cholesky(a),
           "cho_factor": lambda a: sl.cho_factor(a)[0]}


@pytest.mark.parametrize("name", FACTORS)
def test_a_cholesky_factor_is_known_finite_and_its_solves_do_not_read_it_again(name):
    """A warm Cholesky factor is known finite (``Base.finite``): the solves' ``check_finite``
    skips it. Shown by a value written behind the recorder's back (directly into the buffer):
    the solve no longer reads the factor to check it."""
    from flamefuse.lazy import linalg as la
    a_ = _spd()
    c = _warm_factor(a_, FACTORS[name])
    assert la._finite(c) and la._finite(c.T)
    y = np.asarray(numpy.ones(a_.shape[0]))
    assert la.when("solve_triangular", [c, y], check_finite=True) == "later"
    c._b.data[-1] = numpy.inf                  # behind the recorder's back: not seen
    assert la.when("solve_triangular", [c, y], check_finite=True) == "later"
    assert la.when("cho_solve", [c, y], check_finite=True) == "later"


def test_a_factor_handed_out_or_written_is_checked_again():
    """The knowledge goes with any NumPy array handed out (the script may write through it) and
    any recorded write: SciPy's ``ValueError`` of ``check_finite`` then, as SciPy gives it."""
    import scipy.linalg
    a_ = _spd()
    y_ = numpy.ones(a_.shape[0])
    want_l = scipy.linalg.cholesky(a_, lower=True)
    for write in ("numpy", "setitem", "inplace"):
        L = _warm_factor(a_, FACTORS["scipy lower"])
        if write == "numpy":
            numpy.asarray(L)[5, 2] = numpy.inf
        elif write == "setitem":
            L[5, 2] = numpy.inf
        else:
            L *= numpy.inf
        bad = want_l.copy()
        bad[5, 2] = numpy.inf
        with pytest.raises(ValueError) as want:
            scipy.linalg.solve_triangular(bad, y_, lower=True)
        with pytest.raises(ValueError) as got:
            numpy.asarray(sl.solve_triangular(L, np.asarray(y_), lower=True))
        assert str(got.value) == str(want.value), write
    L = _warm_factor(a_, FACTORS["scipy lower"])            # untouched: SciPy's values
    numpy.testing.assert_allclose(numpy.asarray(sl.solve_triangular(L, np.asarray(y_), lower=True)),
                                  scipy.linalg.solve_triangular(want_l, y_, lower=True), rtol=1e-12)


def test_a_symmetric_solve_of_a_vector_runs_as_potrf_and_trtrs():
    """``np.linalg.solve(X.T @ X, X.T @ y)``: chol -> trsm -> trsm_lt with one right-hand side
    runs as potrf, trtrs, trtrs (each LAPACK's routine), not as a fused chol -> trsm kernel (the
    synthesized Cholesky is slower than potrf; fusing a trsv into it gains nothing); nothing
    is compiled for it."""
    from flamefuse.runtime import compiler
    from flamefuse.synth import explain
    rng = numpy.random.default_rng(7)
    x_, y_ = rng.standard_normal((240, 120)), rng.standard_normal(240)
    want = numpy.linalg.solve(x_.T @ x_, x_.T @ y_)
    wanted = len(compiler._ITEMS) + len(compiler._HANDED)
    for _ in range(2):
        explain.reset()
        x = np.asarray(x_)
        got = numpy.asarray(np.linalg.solve(x.T @ x, x.T @ np.asarray(y_)))
        numpy.testing.assert_allclose(got, want, rtol=1e-10)
        line = [s for s in explain.report() if "numpy.linalg.solve" in s][0]
        assert "chol as LAPACK calls (fused with nothing: potrf)" in line, line
        assert "then trsm as LAPACK calls (one right-hand side: trtrs" in line, line
        assert "chol_trsm" not in line, line
    assert len(compiler._ITEMS) + len(compiler._HANDED) == wanted
