"""Matrix-vector, vector-matrix and outer products in flamefuse.lazy, fused as loop nests."""
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy
from flamefuse.lazy.recorder import RECORDER, stages

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def _recording(recording):
    """Every operation recorded, fallbacks are errors (tests/runtime/conftest.py)."""
    yield


def _bicg(np, A, p, r):
    q = A @ p
    s = A.T @ r
    return q, s


def test_bicg_runs_as_one_loop_nest_over_A():
    rng = numpy.random.default_rng(1)
    A_, p_, r_ = rng.random((7, 5)), rng.random(5), rng.random(7)
    q, s = _bicg(lazy, lazy.asarray(A_), lazy.asarray(p_), lazy.asarray(r_))
    lazy.flush()
    assert lazy.stats()["loopnest_groups"] == 1 and lazy.stats()["loopnest_products"] == 2
    kernel = RECORDER.last_loopnest
    assert [a.name for a in kernel.program.arrays if a.role == "in"] == ["a0", "a1", "a2"]
    first = kernel.explain().splitlines()[0]
    assert first.startswith("loop 0") and "S0.i" in first and "S1.j" in first
    assert len(kernel.schedule.roots) == 1
    numpy.testing.assert_allclose(numpy.asarray(q), A_ @ p_, rtol=1e-12)
    numpy.testing.assert_allclose(numpy.asarray(s), A_.T @ r_, rtol=1e-12)


def _bicg_solve(np, A, b, iterations):
    """BiCG (unpreconditioned) written once for NumPy and for flamefuse.lazy."""
    x, r = np.zeros(b.shape[0]), b.copy()
    rt, p, pt = r.copy(), r.copy(), r.copy()
    rho = float(rt @ r)
    for _ in range(iterations):
        q = A @ p
        s = A.T @ pt
        alpha = rho / float(pt @ q)
        x, r, rt = x + alpha * p, r - alpha * q, rt - alpha * s
        new = float(rt @ r)
        p, pt, rho = r + (new / rho) * p, rt + (new / rho) * pt, new
    return x


def test_bicg_iterations_with_elementwise_updates_fuse_both_products_each_time():
    rng = numpy.random.default_rng(2)
    A_ = rng.random((9, 9)) + 9 * numpy.eye(9)
    b_ = rng.random(9)
    x = _bicg_solve(lazy, lazy.asarray(A_), lazy.asarray(b_), 3)
    numpy.testing.assert_allclose(numpy.asarray(x), _bicg_solve(numpy, A_, b_, 3), rtol=1e-10)
    st_ = lazy.stats()
    assert st_["loopnest_products"] == 2 * st_["loopnest_groups"] == 6


def test_transposed_view_is_read_in_place():
    rng = numpy.random.default_rng(3)
    B_ = rng.random((4, 6))
    At = lazy.asarray(B_).T            # a (6, 4) transposed view
    y = At @ lazy.asarray(numpy.arange(4.0))
    z = lazy.asarray(numpy.arange(6.0)) @ At
    lazy.flush()
    names = {a.name: a.shape for a in RECORDER.last_loopnest.program.arrays if a.role == "in"}
    assert len(names) == 3             # one declaration of the matrix for both products
    numpy.testing.assert_allclose(numpy.asarray(y), B_.T @ numpy.arange(4.0), rtol=1e-12)
    numpy.testing.assert_allclose(numpy.asarray(z), numpy.arange(6.0) @ B_.T, rtol=1e-12)


def test_product_waits_for_an_input_written_after_the_group():
    A = lazy.asarray(numpy.ones((3, 2)))
    v = lazy.asarray(numpy.array([1.0, 2.0]))
    first = A @ v
    v += 1.0                           # written after the first product: no hoisting past it
    second = A @ v
    lazy.flush()
    assert lazy.stats()["loopnest_groups"] == 2
    assert numpy.asarray(first).tolist() == [3.0, 3.0, 3.0]
    assert numpy.asarray(second).tolist() == [5.0, 5.0, 5.0]


def test_stages_hoist_products_past_unrelated_elementwise_ops():
    A = lazy.asarray(numpy.ones((3, 2)))
    u, w = lazy.asarray(numpy.ones(2)), lazy.asarray(numpy.ones(3))
    a = A @ u
    c = w * 2.0                        # unrelated
    b = w @ A
    groups = stages(RECORDER.ops)
    assert [[op[1] for op in g] for g in groups] == [["matvec", "vecmat"], ["multiply"]]
    lazy.flush()
    assert numpy.asarray(a).tolist() == [2.0] * 3 and numpy.asarray(b).tolist() == [3.0] * 2
    assert numpy.asarray(c).tolist() == [2.0] * 3


def test_matrix_times_matrix_runs_without_a_warning():
    """Float matrices: a recorded linear-algebra call (flamefuse.lazy.linalg); integer ones: NumPy's
    own matmul (no warning either)."""
    A = lazy.asarray(numpy.eye(2))
    I = lazy.asarray(numpy.eye(2, dtype=numpy.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        C = A @ (A * 2.0)
        D = lazy.dot(A * 3.0, A)
        E = I @ I
    assert numpy.asarray(C).tolist() == [[2.0, 0.0], [0.0, 2.0]]
    assert numpy.asarray(D).tolist() == [[3.0, 0.0], [0.0, 3.0]]
    assert numpy.asarray(E).tolist() == [[1, 0], [0, 1]]
    assert lazy.stats()["native_names"].get("matmul") == 1
    with pytest.raises(ValueError, match="mismatch"):
        A @ lazy.ones(3)


def test_float32_products_keep_their_dtype():
    u = lazy.asarray(numpy.array([1.0, 2.0], numpy.float32))
    v = lazy.asarray(numpy.array([3.0, 4.0, 5.0], numpy.float32))
    o = lazy.outer(u, v)
    assert o.dtype == numpy.float32
    assert numpy.asarray(o).tolist() == [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]


OPS = st.lists(st.sampled_from(["Ax", "ATy", "xA", "yAT", "outer", "dot", "ew"]), min_size=1, max_size=5)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), OPS, st.integers(0, 2**32 - 1), st.booleans())
def test_products_equal_numpy(n, m, ops, seed, transposed):
    rng = numpy.random.default_rng(seed)
    A_ = rng.standard_normal((m, n)).T if transposed else rng.standard_normal((n, m))
    x_, y_ = rng.standard_normal(m), rng.standard_normal(n)
    env_np = {"A": A_, "x": x_, "y": y_}
    env_lz = {"A": lazy.asarray(A_.T).T if transposed else lazy.asarray(A_),
              "x": lazy.asarray(x_), "y": lazy.asarray(y_)}
    for env, np in ((env_np, numpy), (env_lz, lazy)):
        A, x, y = env["A"], env["x"], env["y"]
        for op in ops:
            if op == "Ax":
                y = A @ x
            elif op == "ATy":
                x = A.T @ y
            elif op == "xA":
                x = y @ A
            elif op == "yAT":
                y = x @ A.T
            elif op == "outer":
                A = np.outer(y, x) - A
            elif op == "dot":
                y = np.dot(y, y) * y
            else:
                x, y = x * 0.5 + 1.0, np.sin(y)
        env.update(A=A, x=x, y=y)
    for k in ("A", "x", "y"):
        numpy.testing.assert_allclose(numpy.asarray(env_lz[k]), env_np[k], rtol=1e-10, atol=1e-10)


def test_product_of_a_slice_of_a_product_runs_after_it():
    A = lazy.asarray(numpy.arange(12.0).reshape(4, 3))
    q = A @ lazy.ones(3)
    r = A[:2, :2].T @ q[1:3]
    lazy.flush()
    assert lazy.stats()["loopnest_groups"] == 2
    A_ = numpy.arange(12.0).reshape(4, 3)
    numpy.testing.assert_allclose(numpy.asarray(r), A_[:2, :2].T @ (A_ @ numpy.ones(3))[1:3])


def test_numpy_left_operand_and_small_eager_inputs():
    A_ = numpy.arange(6.0).reshape(2, 3)
    v = lazy.asarray(numpy.array([1.0, 1.0]))
    numpy.testing.assert_array_equal(numpy.asarray(v @ A_), [3.0, 5.0, 7.0])
    numpy.testing.assert_array_equal(numpy.asarray(A_.T @ v), [3.0, 5.0, 7.0])
    numpy.testing.assert_array_equal(numpy.asarray(numpy.matmul(A_, lazy.ones(3))), [3.0, 12.0])
    assert lazy.stats()["loopnest_products"] == 3
    lazy.configure(eager_below=1 << 15)
    lazy.reset_stats()
    numpy.testing.assert_array_equal(numpy.asarray(lazy.asarray(A_) @ lazy.ones(3)), [3.0, 12.0])
    assert lazy.stats()["eager"] >= 1 and lazy.stats().get("loopnest_products", 0) == 0


def test_a_product_reading_its_matrix_alone_is_numpys_own_call():
    """``p @ P`` (markov's step) and ``A.T @ r``: one BLAS gemv each, bit for bit NumPy's, no loop nest."""
    rng = numpy.random.default_rng(4)
    P_, A_, p_, r_ = rng.random((6, 6)), rng.random((5, 4)), rng.random(6), rng.random(5)
    P, A = lazy.asarray(P_) * 1.0, lazy.asarray(A_) * 1.0     # pending matrices, as in markov
    RECORDER.last_loopnest = None
    p = lazy.asarray(p_) @ P
    s = A.T @ lazy.asarray(r_)
    lazy.flush()
    st_ = lazy.stats()
    assert st_["blas_products"] == st_["loopnest_products"] == 2 and RECORDER.last_loopnest is None
    numpy.testing.assert_array_equal(numpy.asarray(p), p_ @ P_)
    numpy.testing.assert_array_equal(numpy.asarray(s), A_.T @ r_)
    q = p @ P
    numpy.testing.assert_array_equal(numpy.asarray(q / q.sum()), (p_ @ P_) @ P_ / ((p_ @ P_) @ P_).sum())
    assert lazy.stats()["blas_products"] == 3


def test_many_products_of_one_matrix_run_as_numpys_calls():
    """A correlation matrix filled column by column (``corr[i+1:, i] = data[:, i] @ data[:, i+1:]``):
    hundreds of products of one matrix in one group would be one huge loop nest (Numba's type
    inference died with RecursionError at 239); a group over LOOPNEST_MAX runs as NumPy's calls."""
    from flamefuse.runtime.products import LOOPNEST_MAX
    m = 4 * LOOPNEST_MAX
    data_ = numpy.random.default_rng(5).standard_normal((9, m))
    data = lazy.asarray(data_) * 1.0
    corr = lazy.zeros((m, m))
    RECORDER.last_loopnest = None
    for i in range(m - 1):
        corr[i + 1:m, i] = data[:, i] @ data[:, i + 1:m]
    got = numpy.asarray(corr)
    want = numpy.zeros((m, m))
    for i in range(m - 1):
        want[i + 1:m, i] = (data_ * 1.0)[:, i] @ (data_ * 1.0)[:, i + 1:m]
    numpy.testing.assert_array_equal(got, want)
    assert RECORDER.last_loopnest is None and lazy.stats()["blas_products"] == m - 1
