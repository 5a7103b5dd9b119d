"""Generated kernels for every reduction form, access kind and loop structure vs NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flamefuse.loopnest import Builder, Dim, fuse_program, maximum, minimum

i, j = Dim("i"), Dim("j")


def _column_reduction(op, dtype):
    """x[j] = x[j] (op) A[i, j]: a reduction along the parallel i loop."""
    b = Builder()
    A = b.array("A", ("n", "m"), dtype)
    x = b.array("x", ("m",), dtype, role="inout")
    fns = {"min": minimum, "max": maximum, "+": lambda s, a: s + a, "*": lambda s, a: s * a,
           "^": lambda s, a: s ^ a, "|": lambda s, a: s | a, "&": lambda s, a: s & a}
    b.assign(x[j], fns[op](x[j], A[i, j]))
    return fuse_program(b.program(), reorder_float=True)


REFS = {"min": np.minimum.reduce, "max": np.maximum.reduce, "+": np.add.reduce,
        "*": np.multiply.reduce, "^": np.bitwise_xor.reduce, "|": np.bitwise_or.reduce,
        "&": np.bitwise_and.reduce}
CASES = [("min", "float64"), ("max", "float64"), ("+", "float64"), ("*", "float64"),
         ("^", "int64"), ("|", "int64"), ("&", "int64"), ("^", "bool"), ("max", "int32")]
KERNELS = {}


@pytest.mark.parametrize("op,dtype", CASES)
@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 30), m=st.integers(1, 30), seed=st.integers(0, 2**31))
def test_privatised_reductions(op, dtype, n, m, seed):
    key = (op, dtype)
    if key not in KERNELS:
        KERNELS[key] = _column_reduction(op, dtype)
    k = KERNELS[key]
    assert k.plans[0].parallel and k.plans[0].private == (0,)
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        A, x = rng.random((n, m)) < 0.5, rng.random(m) < 0.5
    elif dtype.startswith("int"):
        A, x = rng.integers(-50, 50, (n, m)).astype(dtype), rng.integers(-50, 50, m).astype(dtype)
    else:
        A, x = rng.uniform(0.5, 1.5, (n, m)), rng.uniform(0.5, 1.5, m)
    want = REFS[op](np.vstack([x[None, :], A]), axis=0)
    got = k(A=A, x=x.copy())["x"]
    if dtype.startswith("float"):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**31))
def test_scalar_dot_product_and_shifted_strided_accesses(n, seed):
    b = Builder()
    x, y = b.array("x", ("n",)), b.array("y", ("n",))
    z = b.array("z", ("n",))
    dot = b.array("dot", (), role="out")
    b.accumulate(dot[()], x[i] * y[i], extents={"i": "n"})
    even = b.array("even", ("h",))          # h = n // 2 + 1 via the caller's shape
    out = b.array("out", ("h-1",), role="out")
    b.assign(out[i], even[i + 1] - even[i] + z[2 * i], extents={"i": "h-1"})
    k = _cached("dot", lambda: fuse_program(b.program(), reorder_float=True))
    rng = np.random.default_rng(seed)
    xv, yv = rng.standard_normal(n), rng.standard_normal(n)
    h = (n + 1) // 2
    ev, zv = rng.standard_normal(h), rng.standard_normal(n)
    res = k(x=xv, y=yv, z=zv, even=ev)
    np.testing.assert_allclose(res["dot"], xv @ yv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res["out"], ev[1:] - ev[:-1] + zv[: 2 * (h - 1): 2], rtol=1e-12)


_CACHE = {}


def _cached(name, make):
    if name not in _CACHE:
        _CACHE[name] = make()
    return _CACHE[name]


def test_elementwise_chain_outer_product_and_transposed_view():
    b = Builder()
    u, v = b.array("u", ("n",)), b.array("v", ("m",))
    A = b.array("A", ("n", "m"))
    M = b.outer(u, v, alpha=2.0)                 # M = 2 u v^T
    C = b.array("C", ("m", "n"), role="out")
    b.assign(C[j, i], M[i, j] + A.T[j, i])       # C = M^T + A^T, written through a transpose
    k = fuse_program(b.program(outputs=[C]))
    assert len(k.schedule.roots) == 1            # one fused nest; M is a temporary
    rng = np.random.default_rng(0)
    for n, m in ((1, 1), (5, 3), (17, 31)):
        uv, vv, Av = rng.standard_normal(n), rng.standard_normal(m), rng.standard_normal((n, m))
        np.testing.assert_allclose(k(u=uv, v=vv, A=Av)["C"], (2 * np.outer(uv, vv) + Av).T)


def test_exact_mode_keeps_summation_order():
    b = Builder()
    A, p = b.array("A", ("n", "m")), b.array("p", ("m",))
    q = b.matvec(A, p)
    k = fuse_program(b.program(outputs=[q]), reorder_float=False)
    rng = np.random.default_rng(3)
    Av, pv = rng.standard_normal((7, 11)), rng.standard_normal(11)
    want = np.zeros(7)
    for jj in range(11):                  # the program's own order, bit for bit
        want = want + Av[:, jj] * pv[jj]
    np.testing.assert_array_equal(k(A=Av, p=pv)[q.name], want)


def test_multi_store_statement_and_unary_functions():
    from flamefuse.loopnest import (Access, ArrayDecl, Bin, Bound, Call, Index, Load, Program,
                                    Statement, Store, Stored)
    n = Bound("n")
    x, y, t = (Access(a, (Index(0),)) for a in ("x", "y", "t"))
    st_ = Statement("S", ("i",), (n,), (
        Store(t, Call("sqrt", Call("abs", Load(x)))),
        Store(y, Bin("max", Stored(0), Call("exp", Call("neg", Load(x)))))))
    prog = Program((ArrayDecl("x", (n,)), ArrayDecl("y", (n,), role="out"),
                    ArrayDecl("t", (n,), role="out")), (st_,))
    k = fuse_program(prog)
    xv = np.linspace(-2, 2, 9)
    res = k(x=xv)
    np.testing.assert_allclose(res["t"], np.sqrt(np.abs(xv)))
    np.testing.assert_allclose(res["y"], np.maximum(np.sqrt(np.abs(xv)), np.exp(-xv)))


def test_reduction_with_disjoint_access_to_same_array_is_not_privatised():
    b = Builder()
    A = b.array("A", ("m", "h"))
    x = b.array("x", ("n",), role="inout")
    b.accumulate(x[2 * j], A[i, j] * x[2 * j + 1])     # reads the odd, reduces into the even
    k = fuse_program(b.program(), reorder_float=True)
    assert k.analysis.reductions[0].op == "+"
    assert not k.plans[0].parallel and "accessed otherwise" in k.plans[0].reason
    rng = np.random.default_rng(5)
    Av, xv = rng.standard_normal((6, 4)), rng.standard_normal(8)
    want = xv.copy()
    want[0::2] += Av.sum(axis=0) * xv[1::2]
    np.testing.assert_allclose(k(A=Av, x=xv.copy())["x"], want, rtol=1e-12)


def test_vecmat_and_functions_fuse_with_elementwise_code():
    from flamefuse.loopnest import call
    b = Builder()
    A, x = b.array("A", ("n", "m")), b.array("x", ("n",))
    y = b.vecmat(x, A)                               # y = x @ A
    z = b.array("z", ("m",), role="out")
    b.assign(z[i], call("tanh", y[i]) * 0.5)        # elementwise on the result
    k = fuse_program(b.program(outputs=[z]), reorder_float=True)
    rng = np.random.default_rng(7)
    for n, m in ((1, 1), (4, 9), (13, 5)):
        Av, xv = rng.standard_normal((n, m)), rng.standard_normal(n)
        np.testing.assert_allclose(k(A=Av, x=xv)["z"], np.tanh(xv @ Av) * 0.5, rtol=1e-12)


def test_concrete_sizes_without_parameters():
    b = Builder()
    A, x = b.array("A", (3, 4)), b.array("x", (4,))
    y = b.matvec(A, x)
    k = fuse_program(b.program(outputs=[y]), reorder_float=True)
    Av, xv = np.arange(12.0).reshape(3, 4), np.arange(4.0)
    np.testing.assert_allclose(k(A=Av, x=xv)[y.name], Av @ xv)
