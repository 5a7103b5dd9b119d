"""NumPy's and SciPy's results in the corners the fourth camp (never wrong) found wrong.

* ``scipy.linalg``'s ``overwrite_a=True`` / ``overwrite_b=True`` were ignored by the recorded
  calls (``cholesky``, ``cho_factor``, ``cho_solve``, ``solve_triangular``, ``lu_factor``,
  ``lu_solve``, ``inv``): SciPy leaves its results in a Fortran-ordered input of LAPACK's dtype,
  so a script reading the input afterwards saw other values. Such a call now runs SciPy's own
  function on the array's memory (:func:`flamefuse.lazy.scipy_linalg._overwrites`).
"""
import warnings

import numpy
import pytest
import scipy.linalg

import flamefuse.lazy as lazy
from flamefuse.lazy import scipy_linalg

pytestmark = [pytest.mark.usefixtures("recording"),     # tests/lazy/conftest.py
              pytest.mark.filterwarnings("ignore::flamefuse.lazy.recorder.FallbackWarning")]


def _outcome(f):
    try:
        r = f()
    except Exception as ex:  # noqa: BLE001  (the error is the result compared)
        return (type(ex).__name__, str(ex))
    return ("value", _plain(r))


def _plain(r):
    if isinstance(r, tuple):
        return tuple(_plain(x) for x in r)
    if isinstance(r, (bool, int, float, complex, str, type(None))):
        return r
    a = numpy.asarray(r)
    return (a.dtype.str, a.shape, numpy.round(a, 6).tolist())


_CALLS = {
    "cholesky": lambda sla, a, b: sla.cholesky(a, overwrite_a=True),
    "cholesky_lower": lambda sla, a, b: sla.cholesky(a, lower=True, overwrite_a=True),
    "cho_factor": lambda sla, a, b: sla.cho_factor(a, overwrite_a=True)[0],
    "cho_solve": lambda sla, a, b: sla.cho_solve(sla.cho_factor(a * 1), b, overwrite_b=True),
    "solve_triangular": lambda sla, a, b: sla.solve_triangular(a, b, lower=True, overwrite_b=True),
    "solve_triangular_T": lambda sla, a, b: sla.solve_triangular(a, b, trans="T", overwrite_b=True),
    "lu_factor": lambda sla, a, b: sla.lu_factor(a, overwrite_a=True),
    "lu_solve": lambda sla, a, b: sla.lu_solve(sla.lu_factor(a * 1), b, overwrite_b=True),
    "inv": lambda sla, a, b: sla.inv(a, overwrite_a=True),
    "solve": lambda sla, a, b: sla.solve(a, b, overwrite_a=True, overwrite_b=True),
}


@pytest.mark.parametrize("call", sorted(_CALLS))
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
@pytest.mark.parametrize("bdim", [1, 2])
def test_scipy_overwrite_leaves_the_inputs_as_scipy_does(call, order, dtype, bdim):
    def run(np, sla):
        n = 5
        x = np.arange(1.0, n * n + 1).reshape(n, n) % 7
        a = x @ x.T + np.eye(n) * 40
        a = a.astype(dtype)
        b = (np.arange(n * 3.0).reshape(n, 3) - 4).astype(dtype)
        b = b[:, 0] * 1 if bdim == 1 else b
        a, b = (np.asfortranarray(a), np.asfortranarray(b)) if order == "F" else \
            (np.ascontiguousarray(a), np.ascontiguousarray(b))
        out = _outcome(lambda: _CALLS[call](sla, a, b))
        return out, _plain(a), _plain(b)

    assert run(lazy, scipy_linalg) == run(numpy, scipy.linalg)


def test_scipy_overwrite_of_a_pending_input_sees_its_writes_and_keeps_its_readers():
    """The input of an overwriting call is computed first (pending writes), and operations
    recorded before the call that read it keep the values it had."""
    def run(np, sla):
        n = 6
        x = np.arange(1.0, n * n + 1).reshape(n, n) % 5
        a = np.asfortranarray(x @ x.T + np.eye(n) * 30)
        a *= 2.0                               # pending write
        before = a + 1.0                       # pending read
        c = sla.cholesky(a, overwrite_a=True)
        return _plain(c), _plain(a), _plain(before)

    assert run(lazy, scipy_linalg) == run(numpy, scipy.linalg)


# -- floating-point flags of kernel kinds that were not checked ------------------------------

def _warned(mod, f):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        r = f(mod)
        lazy.flush()
    texts = sorted({(w.category.__name__, str(w.message)) for w in ws
                    if w.category.__name__ != "FallbackWarning"})
    return numpy.nan_to_num(numpy.asarray(r, dtype=float), nan=-7.0).tolist(), texts


@pytest.mark.parametrize("case", ["divide", "zero_by_zero", "overflow_sum", "quiet"])
def test_a_clustered_filter_loop_gives_numpys_warnings(case):
    """``x[m] / 0.0`` and sums over selections run as clustered filter loops, which gave no
    warning at all (their flags were not read)."""
    def f(np):
        x = np.arange(-4.0, 60.0) * 1.0
        z = np.zeros(64)
        m = x < 3 if case != "quiet" else x > 100
        if case == "divide":
            return x[m] / 0.0
        if case == "zero_by_zero":
            return [(x[m] / z[m]).sum()]
        if case == "overflow_sum":
            return [(x[m] * 0.0 + 1.5e308).sum()]     # overflow in the sum only
        return [(x[m] / z[m]).sum()]
    assert _warned(lazy, f) == _warned(numpy, f)


@pytest.mark.parametrize("case", ["overflow", "invalid", "finite"])
def test_a_product_groups_loop_nest_gives_numpys_warnings(case):
    """Two products of one matrix run as one loop nest, whose flags were not read: NumPy's
    ``overflow encountered in matmul`` was missing."""
    def f(np):
        A = np.asarray(numpy.ones((40, 30)) * (1e300 if case != "finite" else 1.0))
        if case == "invalid":
            A = np.asarray(numpy.where(numpy.eye(40, 30) > 0, numpy.inf, 1.0))
        x = np.asarray(numpy.ones(30) * (1e300 if case == "overflow" else 1.0))
        if case == "invalid":
            x = np.asarray(numpy.where(numpy.arange(30) == 1, -numpy.inf, 1.0))
        y = np.asarray(numpy.ones(40))
        u = A @ x
        v = A.T @ y
        return numpy.concatenate([numpy.asarray(u), numpy.asarray(v)])
    assert _warned(lazy, f) == _warned(numpy, f)
