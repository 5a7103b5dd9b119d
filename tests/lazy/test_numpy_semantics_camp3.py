"""NumPy's results in the corners the third fuzz campaign found wrong.

Probes of ``numpy.linalg``/``scipy.linalg`` calls (views, transposes, Fortran order, int,
float32, complex, 1x1 and 0x0 inputs, results written in place, write-after-read hazards,
batch and vector right-hand sides, errors), ``np.ma``, ``datetime64``/``timedelta64``
arithmetic and sorting/counting functions on computed arrays agreed with NumPy, except:

* an operation of a lazy array with an ``ndarray`` subclass (``x + masked``, ``np.sqrt(masked)``
  of a ``np.ma.MaskedArray``) copied the subclass into a plain array: the mask was lost, where
  NumPy gives a masked result; ``np.sum(masked)`` / ``np.mean(masked, axis=1)`` summed the masked
  values (a wrong number); ``np.linalg.inv(matrix)``, ``np.dot(x, masked)``, ``x @ matrix`` lost the
  class; ``matrix * x`` and ``x * matrix`` multiplied element-wise (NumPy's ``matrix`` operator is
  a product); the lazy module's own functions (``roll``, ``diff``, ``reshape``, ``transpose``, ``ravel``,
  ``zeros_like``, ``full_like``, ``stack``, ``where``, ``clip``, ``outer``) and ``np.add.reduce`` gave
  plain arrays of a masked array or matrix (the mask dropped: ``np.diff(masked)`` all numbers);
* ``scipy.linalg.cho_solve`` / ``solve_triangular`` / ``lu_solve`` with a right-hand side of the
  wrong length returned numbers (read past ``b``) where SciPy raises ``ValueError``;
* a ``catch_warnings(record=True)`` list read inside its block was empty (the recorded
  operations, and their warnings, ran at the block's end);
* the ``divmod`` operator warned "... in floor_divide" / "... in remainder" (NumPy: "in divmod").
* ``cho_factor``'s ``c`` had zeros in the triangle SciPy leaves ``a``'s entries in.
"""
import numpy
import pytest

import flamefuse.lazy as lazy


pytestmark = pytest.mark.usefixtures("recording")     # tests/lazy/conftest.py


def _masked(r):
    assert isinstance(r, numpy.ma.MaskedArray), type(r)
    return (r.dtype.str, r.shape, numpy.ma.getmaskarray(r).tolist(), r.filled(-99.0).tolist())


@pytest.mark.parametrize("eager_below", [0, 1 << 15])
@pytest.mark.parametrize("expr", [
    lambda x, m: x + m, lambda x, m: m + x, lambda x, m: x * m, lambda x, m: x < m,
    lambda x, m: x.__radd__(m), lambda x, m: x ** m,
    lambda x, m, np=None: (np or numpy).sqrt(m), lambda x, m, np=None: (np or numpy).add(x, m),
    lambda x, m, np=None: (np or numpy).log(m - 1.0)])
def test_ndarray_subclass_operand_keeps_its_type(expr, eager_below):
    lazy.configure(eager_below=eager_below)

    def run(np):
        x = np.arange(6.0) * 1.5 - 2.0
        m = numpy.ma.masked_array(numpy.arange(6.0) - 2.0, mask=[0, 1, 0, 0, 1, 0])
        try:
            return _masked(expr(x, m, np=np))
        except TypeError:
            return _masked(expr(x, m))

    assert run(lazy) == run(numpy)


def _typed(r):
    out = (type(r).__name__.replace("LazyArray", "ndarray"), numpy.asarray(r).dtype.str, numpy.shape(r), numpy.round(numpy.asarray(r), 9).tolist())
    if isinstance(r, numpy.ma.MaskedArray):
        out += (numpy.ma.getmaskarray(r).tolist(),)
    return out


@pytest.mark.parametrize("eager_below", [0, 1 << 15])
@pytest.mark.parametrize("expr", [
    "np.sum(m)", "np.mean(m, axis=1)", "np.max(m, axis=0)", "m.sum()", "np.sum(M, axis=0)", "np.mean(M)",
    "np.linalg.inv(M)", "np.linalg.cholesky(M)", "np.linalg.solve(M, x)", "np.linalg.inv(m)",
    "np.dot(A, m)", "np.dot(A, M)", "A @ M", "M @ A", "A @ m", "m @ A",
    "M * A", "A * M", "M * x", "x * M", "M * x[:, None]", "A + M",
    "np.roll(m, 1)", "np.diff(m)", "np.diff(M)", "np.reshape(m, (2, 8))", "np.transpose(M)", "np.ravel(M)",
    "np.ravel(m)", "np.zeros_like(m)", "np.ones_like(M)", "np.full_like(m, 2)", "np.stack([x, m[0]])",
    "np.where(A > 12, m, 0)", "np.clip(m, 11, 15)", "np.clip(M, 11, 15)", "np.outer(m[0], x)",
    "np.add.reduce(m)", "np.maximum.reduce(M, axis=0)", "np.add.outer(m[0], x)", "np.multiply.outer(x, m[:, 0])", "np.amax(M, axis=1)", "np.prod(m / 10)"])
def test_ndarray_subclass_argument_runs_numpys_call(expr, eager_below):
    lazy.configure(eager_below=eager_below)

    def run(np):
        x = np.arange(4.0) * 2 + 1
        A = np.outer(x, x) + np.eye(4) * 10
        m = numpy.ma.masked_array(numpy.asarray(A) * 1, mask=numpy.asarray(A) > 20)
        M = numpy.asmatrix(numpy.asarray(A) * 1)
        with numpy.testing.suppress_warnings() as sup:
            sup.filter(PendingDeprecationWarning)
            try:
                return _typed(eval(expr, {"np": np, "x": x, "A": A, "m": m, "M": M}))
            except ValueError as ex:
                return (type(ex).__name__, str(ex))

    assert run(lazy) == run(numpy)


@pytest.mark.parametrize("eager_below", [0, 1 << 15])
@pytest.mark.parametrize("expr", [
    "sla.solve_triangular(A, np.ones(5))", "sla.solve_triangular(A, np.ones((5, 2)), lower=True)",
    "sla.cho_solve(sla.cho_factor(A), np.ones(5))", "sla.cho_solve(sla.cho_factor(A), np.ones((3, 2)))",
    "sla.lu_solve(sla.lu_factor(A), np.ones(5))", "sla.solve_triangular(A[:, :3], np.ones(4))",
    "sla.solve_triangular(A, np.ones(4) * 2)", "sla.cho_solve(sla.cho_factor(A), np.ones((4, 2)))"])
def test_scipy_solve_with_a_misfit_right_hand_side_raises_scipys_error(expr, eager_below):
    import scipy.linalg
    from flamefuse.lazy import scipy_linalg     # what ``flamefuse fuse`` answers ``import scipy.linalg`` with
    lazy.configure(eager_below=eager_below)

    def run(np):
        sla = scipy_linalg if np is lazy else scipy.linalg
        x = np.arange(4.0) + 1
        A = np.outer(x, x) + np.eye(4) * 10
        try:
            r = eval(expr, {"np": np, "A": A, "sla": sla})
        except ValueError as ex:
            return (type(ex).__name__, str(ex))
        return numpy.round(numpy.asarray(r), 9).tolist()

    assert run(lazy) == run(numpy)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("check_finite", [True, False])
def test_cho_factor_keeps_the_other_triangle(lower, dtype, check_finite):
    """SciPy's ``c`` keeps ``a``'s entries in the triangle the factor does not use (the
    recorded Cholesky left zeros there); a ``cho_solve`` of it still gives SciPy's values."""
    import scipy.linalg
    from flamefuse.lazy import scipy_linalg

    def run(np, sla):
        out = []
        for k in range(3):              # the second call runs the plan the first one learnt
            a = (np.array([[4.0, 2.0, 1.0], [2.5, 3.0, 0.5], [-0.0, 0.75, 5.0]]) * (k + 1)).astype(dtype)
            c, low = sla.cho_factor(a, lower=lower, check_finite=check_finite)
            x = sla.cho_solve((c, low), np.arange(3.0).astype(dtype) * 1)
            c_nd = numpy.asarray(c)
            out.append((numpy.round(c_nd, 5).tolist(), numpy.signbit(c_nd).tolist(), low,
                        numpy.round(numpy.asarray(x), 5).tolist()))
        return out

    assert run(lazy, scipy_linalg) == run(numpy, scipy.linalg)


def test_warnings_list_read_inside_its_record_block_has_numpys_warnings():
    """``with warnings.catch_warnings(record=True) as w: q = np.log(y); print(len(w))``: the list
    was read before the block's end flushed the recorded operation (it was empty)."""
    import warnings
    from flamefuse.lazy import fpstate

    def run(np, w):
        y = np.arange(6.0) - 1
        seen = []
        with w.catch_warnings(record=True) as ws:
            w.simplefilter("always")
            q = np.log(y)
            seen.append(sorted({str(m.message) for m in ws}))
            r = np.sqrt(q) * 2
            seen.append(sorted({str(m.message) for m in ws}))
        return seen, numpy.nan_to_num(numpy.asarray(r), nan=-1.0).tolist()

    assert run(lazy, fpstate.warnings_module()) == run(numpy, warnings)


@pytest.mark.parametrize("form", ["divmod(x, y)", "divmod(7.0, y)", "divmod(k * 3, k)", "divmod(x, m)"])
def test_divmod_operator_is_numpys_divmod(form):
    """``divmod(x, y)`` of lazy arrays warned "divide by zero encountered in floor_divide" and
    "invalid value encountered in remainder" (NumPy: "... in divmod"); of a masked array it
    masked the division by zero (NumPy's ``np.divmod`` keeps the operands' mask only)."""
    import warnings
    from flamefuse.lazy import fpstate

    def run(np, w):
        x, y, k = np.arange(6.0) * 2 - 3, np.arange(6.0) - 1, np.arange(6) - 2
        m = numpy.ma.masked_array(numpy.arange(6.0), mask=[0, 1, 0, 0, 1, 0])
        with w.catch_warnings(record=True) as ws:
            w.simplefilter("always")
            q, r = eval(form, {"x": x, "y": y, "k": k, "m": m})
            got = [(type(v).__name__.replace("LazyArray", "ndarray"), numpy.ma.getmaskarray(v).tolist(),
                    numpy.nan_to_num(numpy.ma.getdata(v), nan=-1.0).tolist()) for v in (q, r)]
            return got, sorted({str(c.message) for c in ws if issubclass(c.category, RuntimeWarning)})

    assert run(lazy, fpstate.warnings_module()) == run(numpy, warnings)
