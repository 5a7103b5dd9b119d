"""``numpy.linalg`` for lazy arrays: calls recorded as nodes, run as synthesized fused kernels.

Under ``flamefuse fuse`` (or ``flamefuse.lazy.linalg`` directly),
``cholesky``, ``inv`` and ``solve`` of 2-D float32/float64 arrays are
*recorded* (a ``("linalg", Call, ...)`` operation of the recorder,
:class:`flamefuse.synth.calls.Call`) instead of run; so are ``a @ b`` of
two 2-D lazy float arrays of one dtype (through :func:`matmul`, which
:func:`flamefuse.lazy.products.matmul` calls) and the SciPy calls of
:mod:`flamefuse.lazy.scipy_linalg`. Recorded calls of a stage run together
through :func:`flamefuse.synth.run.run_group`: a chain of them becomes one
derived, fused kernel where one exists.

Errors where NumPy raises them (:func:`when`): a call that may raise or warn
(a Cholesky factorization, a general or symmetric inverse or solve, an LU
factorization) runs at the call itself -- the pending work before it first,
so its results are kept whatever happens, then the call alone -- so its
``LinAlgError`` is raised at the script's own statement, inside whatever
``try`` surrounds it (in any caller). A call that cannot raise stays
recorded and fuses with what follows: a product, a triangular solve or
inverse whose diagonal was checked (nonzero), ``cho_solve``, ``lu_solve`` --
unless its result is smaller than ``eager_below`` elements (a solve of one
right-hand side): that runs at once (:func:`small_result`), so the small
element-wise code around it runs in NumPy at once too. A recorded product's result is
C-ordered, as NumPy's ``a @ b`` is (the group computes it so: one gemm either way): the
element-wise code that reads it next (``np.eye(n) - K @ H``) reads it along the grain of
its other, C-ordered operands, where a Fortran-ordered product made each of those kernels
traverse one operand across it (the Kalman update's three element-wise kernels took 2.4x
NumPy's time at n = 500).
A call with an input that is not finite, a triangular operand with a zero
on the diagonal, and forms not recorded (stacked arrays, other dtypes) run
NumPy's or SciPy's own function at once (:func:`own`, no warning), so
values, warnings and errors (``check_finite``'s ``ValueError`` too) are
theirs. ``slogdet`` / ``det`` of a finite, exactly symmetric matrix run the
recorded Cholesky at the call and read the diagonal of its factor (half of
NumPy's LU flops); otherwise, and when that Cholesky fails, NumPy's own. Inputs that are computed and smaller than ``eager_below`` elements
run in NumPy at once. Any other ``numpy.linalg`` name is NumPy's, run on
synced arguments.
"""
from __future__ import annotations

from math import prod

import numpy as _np

from flamefuse.lazy.array import subclass_in, LazyArray, _concrete_nd, _np_args, as_lazy, wrap
from flamefuse.lazy.numpy_api import call as numpy_call
from flamefuse.lazy.recorder import RECORDER, STATS, Base, _flip, written
from flamefuse.lazy.userline import at_user
from flamefuse.runtime import adapt
from flamefuse.runtime.views import make_view
from flamefuse.synth import direct
from flamefuse.synth.calls import Call
from flamefuse.synth.group import RUNS as GROUP_RUNS, _flat
from flamefuse.synth.structure import is_identity

LinAlgError = _np.linalg.LinAlgError
FLOATS = ("float32", "float64")


def _fview(shape, transposed=False):
    if len(shape) == 1:
        return make_view(0, shape, (1,))
    n, m = shape
    return make_view(0, (m, n), (n, 1)) if transposed else make_view(0, (n, m), (1, n))


def recordable(arrays) -> bool:
    """Float arrays of one dtype, 1-D or 2-D, not empty."""
    return (all(isinstance(x, LazyArray) for x in arrays) and len({x.dtype for x in arrays}) == 1
            and arrays[0].dtype.char in "fd" and all(x.ndim in (1, 2) and x.size for x in arrays))


def _small(arrays) -> bool:
    return all(_concrete_nd(x) is not None for x in arrays) and \
        max(x.size for x in arrays) < RECORDER.eager_below


def own(name: str, func, args, kwargs=None):
    """NumPy's / SciPy's own ``func`` on synced arguments, at once and without a warning (a form
    that is not recorded, or one whose errors and values only the library itself gives)."""
    kwargs = kwargs or {}
    STATS["native"] += 1
    from flamefuse.lazy.numpy_api import NATIVE_CALLS, wrap_any
    NATIVE_CALLS[name] += 1
    result = at_user(func, *_np_args(tuple(args)), **_np_args(kwargs))
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*[wrap_any(r) for r in result])
    return wrap_any(result)


def when(op: str, arrays, unit: bool = False, check_finite: bool = False) -> str:
    """Where a call runs: ``"own"`` (the library's function at once), ``"now"`` (recorded and run
    at once, alone) or ``"later"`` (recorded; it cannot raise). The values it depends on are
    computed first: the matrix's (its diagonal, finiteness), and with ``check_finite`` (SciPy's
    default) every input's."""
    if op == "matmul":
        return "later"
    need = list(arrays) if check_finite else [] if op in ("cho_solve", "lu_solve") else list(arrays[:1])
    nds = [_values(x) for x in need]
    if any(nd is None for nd in nds):
        RECORDER.flush()
        nds = [_values(x) for x in need]
        if any(nd is None for nd in nds):
            return "own"
    if not all(_np.isfinite(nd).all() for nd, x in zip(nds, need) if nd.dtype.kind == "f" and not _finite(x)):
        return "own"                     # NaN/inf: the library's errors, check_finite's ValueError
    if op in ("cho_solve", "lu_solve"):
        return "later"
    if op in ("solve_triangular", "inv", "solve"):
        from flamefuse.synth.structure import is_lower
        a = nds[0]
        if op == "solve_triangular" or is_lower(a) or is_lower(a.T):
            return "later" if unit or (a.diagonal() != 0).all() else "own"
    return "now"


def _finite(x: LazyArray) -> bool:
    """Are x's values known to be finite (``Base.finite``: a Cholesky factor not written or
    handed out since)? Then ``check_finite`` need not read them: a Cholesky solve after the
    factorization reads the factor once, as LAPACK must, where SciPy reads it twice (ADMM's
    twenty ``cho_solve`` of one factor, n = 500: 30 us each)."""
    b = x._b
    return b is not None and b.finite is not None and b.finite is b.data


def _factor_finite(arr) -> bool:
    """Is a Cholesky factor ``arr`` (potrf succeeded, zeros above) finite? Its diagonal is: each
    l_ii is computed from a_ii minus the squares of its row's l_ik (k < i), so a NaN or an
    infinity (an overflow too) anywhere in row i makes l_ii NaN (OpenBLAS's potrf lets a NaN
    through where reference LAPACK stops): n reads stand for the n^2 / 2."""
    return arr.ndim == 2 and bool(_np.isfinite(arr.diagonal()).all())


def small_result(where: str, shape) -> str:
    """``"now"`` for a call that would wait (``"later"``) but whose result is smaller than
    ``eager_below`` elements (a solve of one right-hand side at n = 500): computed at once, the
    small element-wise code around it runs in NumPy at once too, as the runtime runs small
    arrays, instead of waiting for a flush that runs it as a kernel (ADMM's loop of 20
    ``cho_solve`` of a vector took twice NumPy's time at n = 500)."""
    return "now" if where == "later" and prod(shape) < RECORDER.eager_below else where


def _values(x: LazyArray):
    """x's values as a NumPy array when they are computed and no pending operation writes them
    (pending reads do not matter); else None."""
    if x._b is None:
        return x._nd
    base = x._base
    if base.data is None or any(b is base for op in RECORDER.ops for b in written(op)):
        return None
    v, flat = x._view, base.data
    return _np.ndarray(v.shape, flat.dtype, buffer=flat, offset=v.offset * flat.itemsize,
                       strides=tuple(s * flat.itemsize for s in v.strides))


def record(name: str, op: str, eager, args, shape, *, lower=True, trans=0, upper=False, pivots=False,
           unit=False, check_finite=False):
    """The lazy result of one call (a tuple ``(result, pivots)`` with ``pivots``); NumPy at once
    for small computed inputs and forms that are not recorded; see :func:`when`."""
    arrays = [as_lazy(x) for x in args]
    if not recordable(arrays):
        return own(name, eager, tuple(arrays))
    if _small(arrays):
        STATS["eager"] += 1
        r = eager(*[x.numpy() for x in arrays])
        return tuple(wrap(_np.asarray(x)) for x in r) if isinstance(r, tuple) else wrap(_np.asarray(r))
    where = small_result(when(op, arrays, unit, check_finite), shape)
    if where == "own":
        return own(name, eager, tuple(arrays))
    plan_key = None
    if where == "now":
        RECORDER.flush()               # the work before it is done: its results are kept
        if not pivots:
            values = [_values(x) for x in arrays]
            if all(v is not None for v in values):
                plan_key = direct.key(name, op, (lower, trans, upper), values)
                plan, first = direct.lookup(plan_key)
                if plan is not None:       # a warm lone call: straight to its LAPACK calls
                    STATS["linalg_now"] += 1
                    arr = plan(values)
                    out = LazyArray(Base(arr.dtype, arr.size, _flat(arr)), plan.view)
                    if op == "cholesky" and _factor_finite(arr):
                        out._b.finite = out._b.data
                    if adapt.STATE.learning:
                        _tally([out] + arrays, shape)
                    return out
                if not first:              # the group runs it, as it did the first time
                    plan_key = None
    dtype = arrays[0].dtype
    base = Base(dtype, prod(shape))
    view = _fview(tuple(shape), transposed=upper)
    if upper:
        view = make_view(0, tuple(shape), view.strides)
    elif op == "matmul":
        view = make_view(0, tuple(shape), (shape[1], 1))   # C-ordered, as NumPy's ``a @ b`` (module doc)
    out = LazyArray(base, view)
    extra, piv = (), None
    if pivots:
        pbase = Base(_np.dtype(_np.int32), shape[0])
        piv = LazyArray(pbase, _fview((shape[0],)))
        extra = ((pbase, piv._view),)
    call = Call(name, op, eager, lower=lower, trans=trans, upper=upper, extra=extra)
    RECORDER.record("linalg", call, (base, view), [(x._base, x._view) for x in arrays], tuple(shape), None)
    if pivots:
        RECORDER.touched[id(pbase)] = pbase
    if where == "now":
        STATS["linalg_now"] += 1
        try:
            RECORDER.flush()           # raise (or warn) here, at the script's statement
        finally:
            _warn_here()
        if plan_key is not None:
            direct.learn(plan_key, call, values, GROUP_RUNS, view)
    return (out, piv) if pivots else out


def _tally(arrays, shape) -> None:
    """What :meth:`flamefuse.lazy.recorder.Recorder.record` counts for a recorded call while
    ``flamefuse fuse`` learns (a large one marks its sites' lines as BLAS-sized work), for a
    call that ran its plan without being recorded."""
    if prod(shape) < adapt.LARGE:
        return
    last = None
    for x in arrays:
        t = x._base.tally
        if t is not None and t is not last:
            t.unjudged += 1
            last = t


def _warn_here() -> None:
    """Issue the ``LinAlgWarning``s of the run just made (:data:`flamefuse.synth.calls.WARNINGS`)
    at the script's line, as SciPy does."""
    import warnings

    from scipy.linalg import LinAlgWarning

    from flamefuse.lazy.recorder import user_stacklevel
    from flamefuse.synth.calls import WARNINGS
    while WARNINGS:
        warnings.warn(WARNINGS.pop(0), LinAlgWarning, stacklevel=user_stacklevel())


def _square(a, name, library=None):
    """``a`` as a lazy array when it is a square matrix; else the error the library's own
    function gives: NumPy's ``LinAlgError('Last 2 dimensions of the array must be square')``, or
    what ``library`` (a SciPy function, whose ``ValueError`` texts differ per function and
    version) raises for a zero matrix of ``a``'s shape and type."""
    a = as_lazy(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        if library is not None:
            library(_np.zeros(a.shape, a.dtype))
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return a


def stacked(*arrays) -> bool:
    """A form that is not recorded (stacked matrices, a 0-d or 1-d 'matrix'; an ``ndarray``
    subclass, whose class NumPy's result keeps: ``inv(matrix)`` is a matrix): the library's own."""
    return any(getattr(x, "ndim", 2) != 2 for x in arrays[:1]) or subclass_in(*arrays)


def cholesky(a, upper=False):
    if stacked(a):
        return own("linalg.cholesky", _np.linalg.cholesky, (a,), {"upper": upper} if upper else {})
    a = _square(a, "cholesky")
    return record("numpy.linalg.cholesky", "cholesky", lambda x: _np.linalg.cholesky(x, upper=upper),
                  (a,), a.shape, upper=bool(upper))


def inv(a):
    if stacked(a):
        return own("linalg.inv", _np.linalg.inv, (a,))
    a = _square(a, "inv")
    return record("numpy.linalg.inv", "inv", _np.linalg.inv, (a,), a.shape)


def solve(a, b):
    if stacked(a, b):
        return own("linalg.solve", _np.linalg.solve, (a, b))
    a, b = _square(a, "solve"), as_lazy(b)
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        return own("linalg.solve", _np.linalg.solve, (a, b))
    return record("numpy.linalg.solve", "solve", _np.linalg.solve, (a, b), b.shape)


def _spd_factor(name: str, a):
    """NumPy's values of the lower Cholesky factor of ``a``, computed by the recorded Cholesky
    (at once, alone), when ``a`` is a finite, exactly symmetric float32/float64 matrix that is
    positive definite; else None (the caller then runs NumPy's own function). The values are
    read first (the pending work that writes them runs); symmetry is checked exactly, since
    ``cholesky`` reads only the lower triangle."""
    from flamefuse.synth.structure import is_symmetric
    if not recordable([a]) or a.ndim != 2:
        return None
    nd = _values(a)
    if nd is None:
        RECORDER.flush()
        nd = _values(a)
    if nd is None or not _np.isfinite(nd).all() or not is_symmetric(nd):
        return None
    try:
        factor = record(name, "cholesky", _np.linalg.cholesky, (a,), a.shape)
    except LinAlgError:
        return None                    # not positive definite: NumPy's own (LU) function
    return factor.numpy()


_SLOGDET = type(_np.linalg.slogdet(_np.eye(1)))


def slogdet(a):
    """``numpy.linalg.slogdet``: of a symmetric positive definite matrix from its Cholesky factor
    (sign 1, log|det| = 2 sum log L_ii: potrf's n^3/3 flops where NumPy's LU takes 2n^3/3);
    anything else (general, indefinite, complex, stacked, not finite) is NumPy's own."""
    if stacked(a):
        return own("linalg.slogdet", _np.linalg.slogdet, (a,))
    a = _square(a, "slogdet")
    factor = _spd_factor("numpy.linalg.slogdet", a)
    if factor is None:
        return own("linalg.slogdet", _np.linalg.slogdet, (a,))
    dtype = factor.dtype.type
    logdet = 2.0 * _np.sum(_np.log(_np.diagonal(factor).astype(_np.float64)))
    return _SLOGDET(dtype(1.0), dtype(logdet))


def det(a):
    """``numpy.linalg.det``: of a symmetric positive definite matrix the squared product of its
    Cholesky factor's diagonal (see :func:`slogdet`); anything else is NumPy's own."""
    if stacked(a):
        return own("linalg.det", _np.linalg.det, (a,))
    a = _square(a, "det")
    factor = _spd_factor("numpy.linalg.det", a)
    if factor is None:
        return own("linalg.det", _np.linalg.det, (a,))
    with _np.errstate(over="ignore", under="ignore"):
        d = factor.dtype.type(_np.prod(_np.diagonal(factor).astype(_np.float64)) ** 2)
    if not _np.isfinite(d) or d == 0:  # over- or underflow: NumPy's own value and warning
        return own("linalg.det", _np.linalg.det, (a,))
    return d


def matmul(a: LazyArray, b: LazyArray):
    """``a @ b`` of two 2-D lazy arrays (called by :func:`flamefuse.lazy.products.matmul`)."""
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: mismatch in core dimension: {a.shape} @ {b.shape}")
    if a.dtype != b.dtype or not recordable([a, b]) or not (_small([a, b]) or _chained(a, b)):
        return numpy_call("matmul", _np.matmul, (a, b), {})     # NumPy's own matmul, no warning
    return record("matmul", "matmul", _np.matmul, (a, b), (a.shape[0], b.shape[1]))


def _chained(a: LazyArray, b: LazyArray) -> bool:
    """Is ``a @ b`` worth recording as a linear-algebra call: something the group does better
    than NumPy's gemm (:func:`flamefuse.synth.translate.matmul`)? ``X.T @ X`` and ``L.T @ L``
    (one base, transposed views: syrk or ltl), a product with a computed identity factor (a
    copy), a product by a square matrix (it may start ``X @ P @ P ...``, run as powers of ``P``
    by squaring: :mod:`flamefuse.synth.power`), or an operand a recorded linear-algebra call
    still computes (the chain goes on on its buffers). Any other product is one gemm either way: NumPy's call at once gives a
    C-ordered result, where the group's is Fortran-ordered, which the element-wise kernels
    that read it next (``relu(x @ W + b)``, a softmax over rows) traverse across the grain:
    an MLP's layers ran 3x slower than NumPy that way."""
    if (a._b is not None and a._b is b._b and a._view == _flip(b._view)) or b.shape[0] == b.shape[1]:
        return True
    for x in (a, b):
        nd = _values(x) if x.ndim == 2 and x.shape[0] == x.shape[1] else None
        if nd is not None and is_identity(nd):
            return True
    pending = {id(x._b) for x in (a, b) if x._b is not None and id(x._b) in RECORDER.touched}
    return bool(pending) and any(op[0] == "linalg" and any(id(w) in pending for w in written(op))
                                 for op in RECORDER.ops)



def __getattr__(name):
    attr = getattr(_np.linalg, name)
    if callable(attr) and not isinstance(attr, type):
        def call(*args, **kwargs):
            return own(f"linalg.{name}", attr, args, kwargs)
        call.__name__ = name
        return call
    return attr
