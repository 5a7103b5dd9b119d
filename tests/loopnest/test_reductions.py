"""Polly-style reduction detection: positive and negative cases."""
import pytest

from flamefuse.loopnest import (Access, ArrayDecl, Bin, Bound, Builder, Const, Dim, Index, Load,
                                NotReduction, Program, Reduction, Statement, Store, Stored,
                                analyse, classify, maximum, minimum)
from flamefuse.loopnest.kernels import bicg

i, j = Dim("i"), Dim("j")


def _one(update, dtype="float64", extents=None):
    b = Builder()
    A = b.array("A", ("n", "n"), dtype)
    x = b.array("x", ("n",), dtype, role="inout")
    b.assign(x[i], update(x[i], A[i, j], A, x), extents=extents)
    return b.program()


@pytest.mark.parametrize("op,dtype", [
    ("+", "float64"), ("*", "float64"), ("min", "float64"), ("max", "float64"),
    ("&", "int64"), ("|", "int64"), ("^", "int64"), ("+", "int32"), ("^", "bool")])
def test_associative_commutative_ops(op, dtype):
    fns = {"+": lambda s, a: s + a, "*": lambda s, a: s * a, "min": minimum, "max": maximum,
           "&": lambda s, a: s & a, "|": lambda s, a: s | a, "^": lambda s, a: s ^ a}
    p = _one(lambda s, a, *_: fns[op](s, a), dtype)
    r = classify(p, 0)
    assert isinstance(r, Reduction) and r.op == op
    assert r.reorderable == (not (dtype == "float64" and op in "+*"))
    assert classify(p, 0, reorder_float=True).reorderable


def test_chains_and_subtraction_count_as_plus():
    assert classify(_one(lambda s, a, *_: (s + a * 2.0) + 1.0), 0).op == "+"
    assert classify(_one(lambda s, a, *_: s - a), 0).op == "+"
    assert classify(_one(lambda s, a, *_: 3.0 + (s - a)), 0).op == "+"


@pytest.mark.parametrize("update,reason", [
    (lambda s, a, *_: a - s, "non-associative"),
    (lambda s, a, *_: s / a, "non-associative"),
    (lambda s, a, *_: s * 2.0 + a, "non-associative"),       # mixed * and +
    (lambda s, a, *_: -s + a, "non-associative"),
    (lambda s, a, *_: s * s, "2 loads"),
    (lambda s, a, A, x: s + a * 0.0 + s, "2 loads"),
    (lambda s, a, *_: s, "unchanged"),
    (lambda s, a, *_: a, "no load"),
])
def test_rejected(update, reason):
    r = classify(_one(update), 0)
    assert isinstance(r, NotReduction) and reason in r.reason


def test_overlapping_shifted_load_is_rejected():
    p = _one(lambda s, a, A, x: s + x[i + 1], extents={"i": "n-1", "j": "n"})
    r = classify(p, 0)
    assert isinstance(r, NotReduction) and "2 loads" in r.reason


def test_escaping_intermediate_and_overlapping_store():
    n = Bound("n")
    ix = (Index(0),)
    x, t = Access("x", ix), Access("t", ix)
    aij = Load(Access("A", (Index(0), Index(1))))
    arrays = (ArrayDecl("A", (n, n)), ArrayDecl("x", (n,), role="inout"),
              ArrayDecl("t", (n,), role="out"))
    red = Store(x, Bin("+", Load(x), aij))
    escape = Statement("S", ("i", "j"), (n, n), (red, Store(t, Stored(0))))
    r = classify(Program(arrays, (escape,)), 0)
    assert isinstance(r, NotReduction) and "escapes" in r.reason
    clobber = Statement("S", ("i", "j"), (n, n), (red, Store(x, Const(0.0))))
    r = classify(Program(arrays, (clobber,)), 0)
    assert isinstance(r, NotReduction) and "overlaps" in r.reason
    fine = Statement("S", ("i", "j"), (n, n), (red, Store(t, aij)))
    assert isinstance(classify(Program(arrays, (fine,)), 0), Reduction)


def test_reduction_dependences_need_the_flag_for_floats():
    exact = analyse(bicg(), reorder_float=False)
    assert not any(d.reduction for d in exact.dependences)
    fast = analyse(bicg(), reorder_float=True)
    self_deps = [d for d in fast.dependences if d.source == d.target]
    assert self_deps and all(d.reduction for d in self_deps)
