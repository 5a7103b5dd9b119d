"""``a @ b`` of two lazy matrices: NumPy's values and NumPy's layout (issue #29).

A general product (no identity factor, not ``X.T @ X``, not by a square matrix, no operand a
recorded linear-algebra call still computes) is NumPy's own gemm, run at once: bit-identical
to NumPy's and C-contiguous as NumPy's result is. It was recorded as a linear-algebra call
whose result was Fortran-ordered, which the element-wise kernels reading it next
(``relu(x @ W + b)``) traversed across the grain: an MLP ran 3x slower than NumPy. The
products the linear-algebra group does better (a chain by one square matrix, ``X.T @ X``)
stay recorded, with NumPy's values.
"""
import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy
from flamefuse.lazy.recorder import RECORDER


def _matrices(seed, n, k, m, dtype):
    rng = numpy.random.default_rng(seed)
    return rng.standard_normal((n, k)).astype(dtype), rng.standard_normal((k, m)).astype(dtype)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 70), st.integers(1, 70), st.integers(2, 70),
       st.sampled_from(["float32", "float64"]), st.booleans())
def test_a_general_product_is_numpys_in_values_and_layout(seed, n, k, m, dtype, pending):
    if k == m:
        m += 1          # not by a square matrix (those stay recorded: a chain may follow)
    a, b = _matrices(seed, n, k, m, dtype)
    lazy.configure(eager_below=0)
    try:
        la, lb = lazy.asarray(a), lazy.asarray(b)
        if pending:                              # a left factor still being computed
            la, a = la * 2.0 + 1.0, a * 2.0 + 1.0
        got = la @ lb
        after = got + 1.0                        # an element-wise op reading the product
        nd = got.numpy()
        assert nd.flags.c_contiguous, "NumPy's matmul gives a C-contiguous result"
        numpy.testing.assert_array_equal(nd, a @ b)
        numpy.testing.assert_array_equal(after.numpy(), (a @ b) + 1.0)
    finally:
        lazy.configure(eager_below=1 << 15)
        RECORDER.flush()


def test_products_that_may_chain_stay_recorded():
    """``X @ P`` by a square P and ``X.T @ X`` are still recorded linear-algebra calls."""
    x, p = _matrices(3, 50, 40, 40, "float64")
    lazy.configure(eager_below=0)
    try:
        lazy.reset_stats()
        lx, lp = lazy.asarray(x), lazy.asarray(p)
        q = lx @ lp @ lp
        g = lx.T @ lx
        numpy.testing.assert_allclose(q.numpy(), x @ p @ p, rtol=1e-12)
        numpy.testing.assert_allclose(g.numpy(), x.T @ x, rtol=1e-12)
        assert lazy.stats()["linalg_calls"] == 3
    finally:
        lazy.configure(eager_below=1 << 15)
        RECORDER.flush()


SHAPES = [((7,), (7,)), ((5, 7), (7,)), ((7,), (7, 4)), ((5, 7), (7, 4)), ((33,), (33,)), ((3, 33), (33, 2))]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(SHAPES), st.sampled_from(["float32", "float64"]),
       st.sampled_from(["matmul", "dot"]), st.booleans())
def test_a_small_product_is_numpys_call(seed, shapes, dtype, name, plain_left):
    """Small computed operands (``np.dot(A[i, :j], A[j, :j])``): NumPy's own product, bit for
    bit (its BLAS dot, not a multiply and a pairwise sum)."""
    rng = numpy.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    la = a if plain_left else lazy.asarray(a)
    got = getattr(lazy, name)(la, lazy.asarray(b))
    want = getattr(numpy, name)(a, b)
    got = got.numpy() if isinstance(got, lazy.LazyArray) else got
    assert numpy.asarray(got).dtype == want.dtype
    numpy.testing.assert_array_equal(got, want)
