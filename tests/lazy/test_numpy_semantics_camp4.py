"""NumPy's and SciPy's results in the corners the fourth camp (never wrong) found wrong.

* ``scipy.linalg``'s ``overwrite_a=True`` / ``overwrite_b=True`` were ignored by the recorded
  calls (``cholesky``, ``cho_factor``, ``cho_solve``, ``solve_triangular``, ``lu_factor``,
  ``lu_solve``, ``inv``): SciPy leaves its results in a Fortran-ordered input of LAPACK's dtype,
  so a script reading the input afterwards saw other values. Such a call now runs SciPy's own
  function on the array's memory (:func:`flamefuse.lazy.scipy_linalg._overwrites`).
* floating-point flags were not read for a product group's loop nest, a clustered filter loop
  (``x[m] / 0``), a lone product of the linear-algebra runner (``X.T @ X`` as syrk), nor from
  Numba's own threads (tests/runtime/test_native.py): no warning, or another text;
* a fused complex product rounded as Numba's ``ar*br - ai*bi`` where NumPy's SIMD loop uses
  fused multiply-adds (an overflow gave ``nan+infj`` for NumPy's ``-inf+infj``); complex
  division, log, log10, tan, tanh, complex64 sqrt, power and sums rounded differently too;
* the fuzz pass (programs written as users write them, under ``flamefuse fuse`` cold, warm and
  ``--no-adapt``, tests/data/fuzz4/): ``x // -1`` of int64 gave 0 for MIN in a compiled kernel
  and no kernel raised NumPy's overflow for ``MIN // -1``; 0-d reductions at the default size
  were lazy arrays; ``flags.owndata`` was False for every computed array; a filter loop's
  "Mean of empty slice." had a full stop NumPy's has not; ``f32 + 1e40`` warned twice on a
  warm run (tests/runtime/test_native.py); the script's code was compiled under its name as
  given, not its absolute path (tests/runtime/test_main_module.py).
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


# -- complex arithmetic: NumPy's bits ---------------------------------------------------------

_COMPLEX_EXPRS = ["a * b", "a * a", "a ** 2", "np.square(a)", "a * b + a", "a / b", "a ** b",
                  "np.sqrt(a)", "np.log(a)", "np.log10(a)", "np.tan(a)", "np.tanh(a)", "np.exp(a)",
                  "a.sum()", "a.mean()", "(a * b).sum()", "a.prod()", "a * 2.5", "a * 3"]


def _complex_run(np, expr, dtype, big):
    rng = numpy.random.default_rng(5)
    n = 300
    A = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 3
    B = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 3
    if big:
        A[:5] = [1e300 + 1e300j, -1e300 + 1e300j, 1e200 - 1e300j, numpy.inf + 1j, 1e300 + 0j]
        B[:5] = A[:5]
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        a = np.asarray(A.astype(dtype)) * 1
        b = np.asarray(B.astype(dtype)) * 1
        r = numpy.asarray(eval(expr, {"np": np, "a": a, "b": b}))
        lazy.flush()
    texts = sorted({str(w.message) for w in ws if w.category is RuntimeWarning})
    parts = numpy.atleast_1d(r).view(numpy.float32 if r.dtype == numpy.complex64 else numpy.float64)
    return r.dtype.str, r.ndim, ["nan" if v != v else v for v in parts.tolist()], texts


@pytest.mark.parametrize("expr", _COMPLEX_EXPRS)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("big", [False, True])
def test_complex_results_are_numpys_bits(expr, dtype, big):
    """A fused complex product was Numba's ``ar*br - ai*bi`` where NumPy's SIMD loop uses
    fused multiply-adds: last bits differed for a quarter of the operands, and an overflow gave
    ``nan+infj`` for NumPy's ``-inf+infj``; complex division, log, log10, tan, tanh, complex64
    sqrt, power and sums differed too (now NumPy's own calls)."""
    with numpy.errstate(all="warn"):
        assert _complex_run(lazy, expr, dtype, big) == _complex_run(numpy, expr, dtype, big)


def _jit(monkeypatch, jit="1"):
    """Kernels compiled by Numba (``jit="1"``) or run as plain Python, with the plans (and the
    kernels their steps hold) of earlier tests forgotten."""
    from flamefuse.runtime import execute, filters
    monkeypatch.setenv("FLAMEFUSE_JIT", jit)
    monkeypatch.setenv("FLAMEFUSE_COMPILE", "inline")
    monkeypatch.setattr(execute, "_PLANS", {})
    monkeypatch.setattr(filters, "_PLANS", {})


def test_complex_product_overflow_compiled(monkeypatch):
    """The Numba-compiled kernel (not only the plain-Python one) gives NumPy's ``-inf+infj``."""
    _jit(monkeypatch)
    for expr in ("a * b + a", "a ** 2 - b"):
        for dtype in ("complex128", "complex64"):
            assert _complex_run(lazy, expr, dtype, True) == _complex_run(numpy, expr, dtype, True)


@pytest.mark.parametrize("case", ["XtX", "XtX_sum", "XA", "AAA", "finite"])
def test_a_linear_algebra_groups_products_give_numpys_warnings(case):
    """``X.T @ X`` runs as the BLAS syrk in a linear-algebra group, whose flags were not read
    (and a later NumPy call of the group cleared them): NumPy's ``overflow encountered in
    matmul`` was missing."""
    def f(np):
        rng = numpy.random.default_rng(0)
        scale = 1.0 if case == "finite" else 1e160
        X = np.asarray(rng.standard_normal((60, 40)) * scale)
        A = np.asarray(rng.standard_normal((40, 40)) * scale)
        if case in ("XtX", "finite"):
            return X.T @ X
        if case == "XtX_sum":
            return [(X.T @ X).sum()]
        if case == "XA":
            return X @ A
        return A @ A @ A
    assert _warned(lazy, f) == _warned(numpy, f)


# -- the fuzz pass's findings (flamefuse fuse on small programs written as users write them) ---

@pytest.mark.parametrize("eager_below", [0, 1 << 15])
def test_reductions_of_a_0d_array_are_numpys_scalars(eager_below):
    """``np.array(3.0).sum()`` / ``.max(axis=0)`` at flamefuse fuse's default size gave a lazy
    0-d array (``type(s).__name__`` 'LazyArray', ``isinstance(s, np.generic)`` False) where the
    same reduction of a 1-D array gave NumPy's scalar."""
    lazy.configure(eager_below=eager_below)

    def run(np):
        a = np.array(3.0)
        b = np.array([1.5, 2.5, 4.0])
        out = []
        for r in (a.sum(), a.max(axis=0), a.min(), a.prod(), b.sum()):
            out.append((type(r).__name__ if eager_below else None, isinstance(r, numpy.generic)
                        if eager_below else None, float(r)))
        return out
    assert run(lazy) == run(numpy)


@pytest.mark.parametrize("eager_below", [0, 1 << 15])
def test_owndata_is_numpys(eager_below):
    """``a.copy().flags.owndata`` was False (the synced memory is a view of the recorder's
    buffer); NumPy's is True for every array that is no view."""
    lazy.configure(eager_below=eager_below)

    def run(np):
        a = np.arange(24.0).reshape(4, 6) * 1
        c = a.copy()
        out = []
        for x in (a, c, a.T, a[1:], a.reshape(-1), np.ascontiguousarray(a.T), c * 2):
            out.append((x.flags.owndata, x.flags["OWNDATA"], x.flags["O"], "OWNDATA : True" in repr(x.flags),
                        x.base is None))
        return out
    assert run(lazy) == run(numpy)


def test_mean_of_an_empty_selection_warns_numpys_text():
    """The clustered filter loop's "Mean of empty slice." had a full stop NumPy 2.4's text
    has not."""
    def f(np):
        x = np.arange(-4.0, 60.0) * 1.0
        return [x[x > 100].mean(), x[x > 1].mean()]
    assert _warned(lazy, f) == _warned(numpy, f)


@pytest.mark.parametrize("jit", ["0", "1"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_signed_floor_divide_by_minus_one_is_numpys(monkeypatch, jit, dtype):
    """``x // -1`` of int64 in a compiled kernel gave 0 for ``MIN // -1`` (NumPy: MIN, wrapped),
    and no kernel raised NumPy's "overflow encountered in floor_divide" for it."""
    _jit(monkeypatch, jit)
    lo = int(numpy.iinfo(dtype).min)

    def f(np):
        x = np.asarray(numpy.array([lo, lo + 1, -5, 0, 7] * 9000, dtype)) * 1
        d = x * 0 - 1
        return numpy.concatenate([numpy.asarray(v).astype(float) for v in (x // -1, x % -1, x // d, x // 3)])
    assert _warned(lazy, f) == _warned(numpy, f)

    def g(np):                          # an in-place update: NumPy's categories, named
        x = np.asarray(numpy.array([lo, 3] * 20000, dtype)) * 1
        x //= -1
        return x
    assert _warned(lazy, g) == _warned(numpy, g)


def test_compiled_parallel_filter_loops_and_loop_nests_give_numpys_warnings(monkeypatch):
    """The same through Numba-compiled kernels large enough to run their chunks in parallel
    (on Numba's threads before a native library exists)."""
    _jit(monkeypatch)
    from flamefuse.runtime import linalg
    monkeypatch.setattr(linalg, "_KERNELS", {})
    rng = numpy.random.default_rng(2)
    xs = rng.standard_normal(60_000)
    xs[50_000:50_010] = 0.0

    def filt(np):
        x = np.asarray(xs) * 1.0
        m = x > -0.5
        return [(x[m] / x[m]).sum(), (x[m] * 1e306 * 1e10).max()]

    a_values = rng.standard_normal((300, 200)) * 1e200

    def nest(np):
        A = np.asarray(a_values)
        x = np.asarray(numpy.ones(200) * 1e200)
        y = np.asarray(numpy.ones(300))
        return numpy.concatenate([numpy.asarray(A @ x), numpy.asarray(A.T @ y)])
    assert _warned(lazy, filt) == _warned(numpy, filt)
    assert _warned(lazy, nest) == _warned(numpy, nest)
