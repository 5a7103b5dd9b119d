"""Recorded products are C-ordered, as NumPy's ``a @ b`` is (issue 27, item 10).

A product the linear-algebra group computes (``K @ H`` where K is still being computed, a
product by a square matrix) was Fortran-ordered: the element-wise code reading it next
(``np.eye(n) - K @ H``, the Kalman update) traversed it across the grain of its C-ordered
operands (three element-wise kernels at 2.4x NumPy's time, n = 500). The product is now
recorded with a C-ordered view and the group computes it in that layout (one gemm either
way); values are NumPy's wherever the product goes next: element-wise code, the script, or
another call of the group (which reads it transposed)."""
import numpy
import pytest
import scipy.linalg

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
from flamefuse.lazy.recorder import RECORDER
from flamefuse.synth import explain


@pytest.fixture(autouse=True)
def _fresh():
    explain.reset()
    yield
    RECORDER.flush()


def _data(n=40, m=24, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    return {"P": x @ x.T / n + numpy.eye(n), "H": rng.standard_normal((m, n)) / numpy.sqrt(n),
            "S": rng.standard_normal((m, m)) + m * numpy.eye(m), "B": rng.standard_normal((n, 5))}


def _close(got, want):
    numpy.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12 * numpy.abs(want).max())


def test_a_product_read_by_elementwise_code_is_c_ordered():
    d = _data()
    n = d["P"].shape[0]
    P, H, S = (np.asarray(d[k]) for k in "PHS")
    K = P @ H.T @ np.linalg.inv(S)       # K @ H: K's base is written by a recorded call
    KH = K @ H
    assert RECORDER.ops and RECORDER.ops[-1].kind == "linalg", "the product is recorded"
    assert KH._view.strides == (n, 1), "the element-wise code reads the product C-ordered"
    IKH = np.eye(n) - KH
    got = (IKH @ P).numpy()
    k = d["P"] @ d["H"].T @ numpy.linalg.inv(d["S"])
    _close(got, (numpy.eye(n) - k @ d["H"]) @ d["P"])
    kh = KH.numpy()
    assert kh.flags.c_contiguous, "C-ordered, as NumPy's product"
    _close(kh, k @ d["H"])
    assert got.flags.c_contiguous


@pytest.mark.parametrize("n, m", [(30, 30), (30, 7), (1, 30), (30, 1)])
def test_products_by_a_square_matrix_and_their_chains_are_numpys(n, m):
    rng = numpy.random.default_rng(n + m)
    x, q = rng.standard_normal((n, m)), rng.standard_normal((m, m))
    lq = np.asarray(q)
    one = np.asarray(x) @ lq
    three = np.asarray(x) @ lq @ lq @ lq
    pos = numpy.abs(q) / m                         # a power chain (nonnegative: by squaring)
    lp, chain, want = np.asarray(pos), np.asarray(numpy.abs(x)), numpy.abs(x)
    for _ in range(5):
        chain, want = chain @ lp, want @ pos
    eye = np.asarray(numpy.eye(n)) @ np.asarray(x)  # an identity factor: a copy
    for got, ref in ((one, x @ q), (three, x @ q @ q @ q), (chain, want), (eye, x)):
        nd = got.numpy()
        assert nd.flags.c_contiguous
        _close(nd, ref)


def test_a_c_ordered_product_read_by_the_groups_calls():
    """The group's calls read the product's buffer transposed: solves, inverses and factors
    of it, with the product dead or still seen by the script."""
    d = _data()
    P, S, B = (np.asarray(d[k]) for k in "PSB")
    p, s = d["P"], d["S"]
    PP = P @ P                                   # symmetric in exact arithmetic only
    kept = P @ P
    got = {"solve": np.linalg.solve(P @ P, B), "inv": np.linalg.inv(S @ S),
           "tri": sl.solve_triangular(np.linalg.cholesky(P), PP, lower=True),
           "kept_inv": np.linalg.inv(kept), "lu": sl.lu_solve(sl.lu_factor(S @ S), np.asarray(d["S"]))}
    want = {"solve": numpy.linalg.solve(p @ p, d["B"]), "inv": numpy.linalg.inv(s @ s),
            "tri": scipy.linalg.solve_triangular(numpy.linalg.cholesky(p), p @ p, lower=True),
            "kept_inv": numpy.linalg.inv(p @ p),
            "lu": scipy.linalg.lu_solve(scipy.linalg.lu_factor(s @ s), s)}
    for k, v in got.items():
        _close(v.numpy(), want[k])
    _close(kept.numpy(), p @ p)
    _close(PP.numpy(), p @ p)
