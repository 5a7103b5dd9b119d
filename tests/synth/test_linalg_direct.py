"""Lone calls at the call go straight to LAPACK on a warm key (flamefuse.synth.direct): the plan
is learnt from the first call's group, hit by the next call of the same structure, and gives
the group's values, form, errors and --explain line."""
import numpy
import pytest
import scipy.linalg

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
from flamefuse.lazy.recorder import RECORDER
from flamefuse.synth import direct, explain


def spd(n, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    return x @ x.T + n * numpy.eye(n)


@pytest.fixture(autouse=True)
def _fresh():
    direct.PLANS.clear()
    explain.reset()
    yield
    RECORDER.flush()


def test_second_identical_cholesky_hits_the_plan_with_the_groups_values():
    a = spd(90)
    first = np.linalg.cholesky(np.asarray(a)).numpy()
    hits = direct.STATS["hits"]
    second = np.linalg.cholesky(np.asarray(a)).numpy()
    assert direct.STATS["hits"] == hits + 1
    assert numpy.array_equal(first, second)
    assert numpy.array_equal(second, numpy.tril(second)), "zeros above the factor"
    numpy.testing.assert_allclose(second, numpy.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    assert explain.report() == ["linalg: chol as LAPACK calls (fused with nothing: potrf), n = 90 "
                                "[numpy.linalg.cholesky] (x2)"]


def test_upper_factor_of_scipy_on_the_plan():
    a = spd(70, seed=3)
    for _ in range(3):
        u = sl.cholesky(np.asarray(a))
        c, low = sl.cho_factor(np.asarray(a))
    assert direct.STATS["hits"] >= 4
    numpy.testing.assert_allclose(numpy.asarray(u), scipy.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    numpy.testing.assert_allclose(numpy.triu(numpy.asarray(c)), numpy.triu(scipy.linalg.cho_factor(a)[0]),
                                  rtol=1e-12, atol=1e-12)
    assert low is False


def test_warm_plan_raises_where_numpy_raises():
    """The jitter loop: a failing Cholesky of a key whose plan is learnt raises LinAlgError at
    the call, with NumPy's message, and the script's except branch runs."""
    a = spd(60)
    np.linalg.cholesky(np.asarray(a))
    np.linalg.cholesky(np.asarray(a))
    bad = a.copy()
    bad[10, 10] = -1.0
    hits = direct.STATS["hits"]
    with pytest.raises(numpy.linalg.LinAlgError, match="^Matrix is not positive definite$"):
        np.linalg.cholesky(np.asarray(bad))
    assert direct.STATS["hits"] == hits + 1


def test_cho_solve_of_a_vector_in_a_loop_runs_the_plan():
    n = 60                                    # a result below eager_below (100 here): at the call
    a = spd(n, seed=1)
    rng = numpy.random.default_rng(2)
    c = sl.cho_factor(np.asarray(a))
    cf = scipy.linalg.cho_factor(a)
    for k in range(4):
        b = rng.standard_normal(n)
        got = sl.cho_solve(c, np.asarray(b)).numpy()
        numpy.testing.assert_allclose(got, scipy.linalg.cho_solve(cf, b), rtol=1e-10)
    assert direct.STATS["hits"] >= 3
    assert [k for k, p in direct.PLANS.items() if p is not None and k[1] == "cho_solve"]


@pytest.mark.parametrize("lower,trans", [(True, 0), (True, 1), (False, 0), (False, "T")])
def test_solve_triangular_of_a_vector_on_the_plan(lower, trans):
    n = 50
    a = spd(n, seed=4)
    t = numpy.tril(a) if lower else numpy.triu(a)
    rng = numpy.random.default_rng(5)
    for _ in range(3):
        b = rng.standard_normal(n)
        got = sl.solve_triangular(np.asarray(t), np.asarray(b), lower=lower, trans=trans).numpy()
        numpy.testing.assert_allclose(got, scipy.linalg.solve_triangular(t, b, lower=lower, trans=trans),
                                      rtol=1e-10)
    assert sum(1 for k, p in direct.PLANS.items() if p is not None and k[1] == "solve_triangular") == 1


def test_a_flushed_lone_solve_with_many_right_hand_sides_runs_the_plan_when_warm():
    """A solve recorded for later (its result is not small) and flushed alone: the first runs
    through the group (trtrs: the kernel measured no faster), the next of the same structure
    runs the plan; values are SciPy's."""
    n = 40
    a = spd(n)
    lo = numpy.tril(a)
    rng = numpy.random.default_rng(0)
    for k in range(3):
        b = rng.standard_normal((n, 30))
        got = sl.solve_triangular(np.asarray(lo), np.asarray(b), lower=True, check_finite=False).numpy()
        numpy.testing.assert_allclose(got, scipy.linalg.solve_triangular(lo, b, lower=True), rtol=1e-10)
        if k == 0:
            hits = direct.STATS["hits"]
    assert direct.STATS["hits"] == hits + 2
    assert explain.report() == ["linalg: trsm as LAPACK calls (fused with nothing: trtrs (the kernel measured "
                                "no faster)), n = 40 [scipy.linalg.solve_triangular] (x3)"]


def test_a_lone_solve_whose_result_is_unseen_is_not_kept():
    n = 40
    lo = numpy.tril(spd(n))
    b = numpy.ones((n, 30))
    for _ in range(2):
        x = sl.solve_triangular(np.asarray(lo), np.asarray(b), lower=True, check_finite=False)
        base = x._b
        del x
        RECORDER.flush()
        assert base.data is None


def test_a_group_that_ran_a_kernel_or_numpy_gets_no_plan():
    """The rule: a plan only for a group that ran as one chain of LAPACK calls only."""
    from flamefuse.synth.calls import Call
    k = ("x", "cholesky", (True, 0, False))
    chol, inv = Call("x", "cholesky", None), Call("x", "inv", None)
    direct.learn(k, chol, [], [("linalg: chol as chol variant 1, n = 9", False)], None)
    assert direct.PLANS[k] is None
    direct.learn(k, chol, [], [], None)             # NumPy's own call: no chain line
    assert direct.PLANS[k] is None
    direct.learn(k, inv, [], [("linalg: trinv as LAPACK calls", True)], None)
    assert direct.PLANS[k] is None
    direct.learn(k, chol, [], [("linalg: chol as LAPACK calls (fused with nothing: potrf)", True)], None)
    assert direct.PLANS[k] is not None


def test_a_plan_hit_counts_for_the_adaptive_decisions_as_a_recorded_call(monkeypatch):
    """While flamefuse fuse learns, a large call marks its site as BLAS-sized work
    (Tally.unjudged); a call that ran its plan, never recorded, counts the same."""
    from flamefuse.runtime import adapt
    monkeypatch.setattr(adapt.STATE, "learning", True)
    monkeypatch.setattr(adapt.STATE, "tallies", {})
    a = spd(200)                                  # 40000 elements: at least adapt.LARGE
    counts = []
    for _ in range(3):
        x = np.asarray(a)
        x = x + 0.0                                # a recorded base made on this test's line
        RECORDER.flush()
        before = sum(t.unjudged for t in adapt.STATE.tallies.values())
        np.linalg.cholesky(x)
        counts.append(sum(t.unjudged for t in adapt.STATE.tallies.values()) - before)
    assert direct.STATS["hits"] and counts[0] > 0 and counts == [counts[0]] * 3, counts
