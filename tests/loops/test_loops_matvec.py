"""NumPy's vector-matrix and matrix-vector products (``u @ M``, ``M @ v``), bit for bit, in
compiled code (flamefuse.loops.numba_parts ``_vecmat``/``_matvec``: NumPy's own dispatch between
``cblas_dgemv``, ``DOUBLE_dot`` and its own loop), and the run-time overlap test of views."""
import itertools

import numpy as np
import pytest

pytest.importorskip("numba")

from flamefuse.loops.blas import ddot_address, dgemv_address  # noqa: E402


@pytest.fixture(scope="module")
def products():
    from numba import njit

    from flamefuse.loops.numba_parts import _matvec, _vecmat

    @njit
    def vm(u, a, fp, fg, out):
        return _vecmat(u, a, fp, fg, out).copy()

    @njit
    def mv(a, v, fp, fg, out):
        return _matvec(a, v, fp, fg, out).copy()
    return vm, mv


def _views(rng, dn, dp):
    """Matrices of shape (dn, dp) with many layouts: C, F (a transpose), a sub-block, a
    column-strided, a row-reversed and a column-reversed view, both strides non-unit."""
    side = 2 * max(dn, dp) + 3
    big = rng.standard_normal((side, side)) * 10.0 ** rng.integers(-6, 6, (side, side))
    out = {
        "C": big[:dn, :dp],
        "F": big[:dp, :dn].T,
        "block": big[1:dn + 1, 2:dp + 2],
        "colstep": big[:dn, :2 * dp:2],
        "rowstep": big[:2 * dn:2, :dp],
        "both": big[:2 * dn:2, :2 * dp:2],
        "rev_rows": big[dn - 1::-1, :dp] if dn else big[:0, :dp],
        "rev_cols": big[:dn, dp - 1::-1] if dp else big[:dn, :0],
        "F_step": big[:2 * dp:2, :dn].T,
    }
    return out


def _vectors(rng, n):
    big = rng.standard_normal(3 * n + 4) * 10.0 ** rng.integers(-6, 6, 3 * n + 4)
    return {"contig": big[1:n + 1], "step2": big[:2 * n:2], "step3": big[2:2 + 3 * n:3],
            "reversed": big[n - 1::-1] if n else big[:0]}


SHAPES = [(0, 3), (3, 0), (1, 1), (1, 5), (5, 1), (2, 2), (3, 7), (7, 3), (17, 9), (64, 33), (101, 130)]


def test_vector_matrix_products_are_numpys_bit_for_bit(products):
    vm, mv = products
    rng = np.random.default_rng(11)
    fp, fg = ddot_address(), dgemv_address()
    assert fp and fg
    differ = 0
    for dn, dp in SHAPES:
        out = np.empty(max(dn, dp) + 1)
        for (mk, a), (vk, u) in itertools.product(_views(rng, dn, dp).items(), _vectors(rng, dn).items()):
            assert a.shape == (dn, dp) and u.shape == (dn,)
            want = u @ a
            got = vm(u, a, fp, fg, out)
            assert got.tobytes() == want.tobytes(), (dn, dp, mk, vk)
            # NumPy's loop and its BLAS call differ somewhere: the test can see a wrong choice
            if dn > 2 and dp > 2:
                differ += np.any(want != np.array([sum(u[i] * a[i, j] for i in range(dn)) for j in range(dp)]))
    assert differ > 0


def test_matrix_vector_products_are_numpys_bit_for_bit(products):
    vm, mv = products
    rng = np.random.default_rng(12)
    fp, fg = ddot_address(), dgemv_address()
    for dp, dn in SHAPES:          # a is (dm, dn) = (dp, dn)
        out = np.empty(max(dn, dp) + 1)
        for (mk, a), (vk, v) in itertools.product(_views(rng, dp, dn).items(), _vectors(rng, dn).items()):
            want = a @ v
            got = mv(a, v, fp, fg, out)
            assert got.tobytes() == want.tobytes(), (dp, dn, mk, vk)


def test_mismatched_products_raise(products):
    vm, mv = products
    with pytest.raises(ValueError):
        vm(np.ones(3), np.ones((4, 2)), ddot_address(), dgemv_address(), np.empty(8))
    with pytest.raises(ValueError):
        mv(np.ones((4, 2)), np.ones(3), ddot_address(), dgemv_address(), np.empty(8))


@pytest.fixture(scope="module")
def overlaps():
    from numba import njit

    from flamefuse.loops.numba_parts import _overlaps

    @njit
    def ov(a, b, r0, r1, c0, c1, s0, s1, q0, q1, d0, d1, t0, t1):
        return _overlaps(a[r0:r1:s0, c0:c1:s1], a, b[q0:q1:t0, d0:d1:t1], b)
    return ov


def test_overlap_test_is_never_wrong_when_it_says_disjoint(overlaps):
    """Exhaustively on a small matrix: whenever _overlaps says no, the two views share no
    element (checked with NumPy); it says no for the factorizations' disjoint blocks."""
    a = np.arange(30.0).reshape(5, 6)
    b = np.arange(30.0).reshape(5, 6)
    rng = np.random.default_rng(3)
    said_no = 0
    for _ in range(3000):
        r0, r1, q0, q1 = rng.integers(-1, 6, 4)
        c0, c1, d0, d1 = rng.integers(-1, 7, 4)
        s0, s1, t0, t1 = rng.choice([1, 2, -1, 3], 4)
        other = rng.random() < 0.1
        x = a[r0:r1:s0, c0:c1:s1]
        y = (b if other else a)[q0:q1:t0, d0:d1:t1]
        got = overlaps(a, b if other else a, r0, r1, c0, c1, s0, s1, q0, q1, d0, d1, t0, t1)
        shared = np.shares_memory(x, y)
        assert got or not shared, (r0, r1, s0, c0, c1, s1, q0, q1, t0, d0, d1, t1, other)
        said_no += not got
    assert said_no > 500
    # lu's and gauss's blocks: column k or row k against the trailing block
    n = 6
    for k in range(n - 1):
        assert not overlaps(a, a, k + 1, n, k + 1, n, 1, 1, k + 1, n, k, k + 1, 1, 1)
        assert not overlaps(a, a, k + 1, n, k + 1, n, 1, 1, k, k + 1, k + 1, n, 1, 1)
        assert overlaps(a, a, k, n, k, n, 1, 1, k, k + 1, k, n, 1, 1)
