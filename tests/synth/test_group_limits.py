"""A group of many recorded calls that share no buffer (issue 27).

A list of solves against one C-ordered triangular matrix, each read only after all are
recorded: every solve copies the matrix and its right-hand side into the open chain, whose
buffer names (23 letters) ran out at the twelfth call: ``IndexError: string index out of
range`` in ``Group._add``, and ``numpy.asarray`` of the results (the flush ran inside the
buffer protocol, whose error NumPy drops) returned uninitialised memory. The chain now closes
before a call that might not find names enough (``Group.make_room``)."""
import numpy
import pytest
import scipy.linalg

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
from flamefuse.lazy.recorder import RECORDER


@pytest.fixture(autouse=True)
def _fresh():
    yield
    RECORDER.flush()


@pytest.mark.parametrize("count", [11, 12, 30])
def test_many_solves_in_one_group_are_scipys(count):
    n = 24
    rng = numpy.random.default_rng(count)
    x = rng.standard_normal((n, n))
    lower = numpy.linalg.cholesky(x @ x.T + n * numpy.eye(n))        # C-ordered: copied per call
    rhs = [rng.standard_normal((n, 8)) for _ in range(count)]
    ll = np.asarray(lower)
    got = [sl.solve_triangular(ll, np.asarray(b), lower=True) for b in rhs]
    assert len(RECORDER.ops) == count, "all recorded, one group"
    for g, b in zip(got, rhs):
        numpy.testing.assert_allclose(g.numpy(), scipy.linalg.solve_triangular(lower, b, lower=True),
                                      rtol=1e-12, atol=1e-12)


def test_many_inverses_and_products_in_one_group():
    n = 24
    rng = numpy.random.default_rng(5)
    mats = [numpy.tril(rng.standard_normal((n, n))) + n * numpy.eye(n) for _ in range(14)]
    got = [np.linalg.inv(np.asarray(m)) @ np.asarray(m.T.copy()) for m in mats]
    for g, m in zip(got, mats):
        numpy.testing.assert_allclose(g.numpy(), numpy.linalg.inv(m) @ m.T, rtol=1e-10, atol=1e-10)


def test_a_flush_that_fails_inside_numpy_asarray_raises(monkeypatch, capsys):
    """``numpy.asarray(x)`` of a lazy array asks for its buffer first; a flush that raised there
    was dropped by NumPy, which then called ``__array__`` and got the uninitialised memory of
    the results the failed flush never wrote. The error now reaches the caller."""
    import flamefuse.synth.translate as translate

    def boom(*args):
        raise RuntimeError("a failing group")
    monkeypatch.setitem(translate.HANDLERS, "matmul", boom)
    rng = numpy.random.default_rng(9)
    p = np.asarray(rng.standard_normal((30, 30)))
    q = p @ p                                  # a product by a square matrix: recorded
    assert RECORDER.ops
    with pytest.raises(RuntimeError, match="a failing group"):
        numpy.asarray(q)
    capsys.readouterr()
