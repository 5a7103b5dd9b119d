"""What the generated modules' SciPy-style functions run in Python.

A variant's wrapper calls its kernel through ``_call`` of :mod:`flamefuse.blas_call`
(the checks, block size, pivots, work arrays and BLAS threads, without Numba, so that
a kernel's native library is called by the same code).
``_scipy_call`` is the SciPy-style function of a module (any layout and LAPACK
precision in, copies where needed, NumPy/SciPy's values and errors out; see
:mod:`flamefuse.codegen.scipy_style`), with ``_prepare``, ``_precision``,
``_finite``, ``_result`` and ``_failed``.

Like :mod:`flamefuse.codegen.numba_blas`, this module is real (tested directly)
and copied, but for this docstring, into every generated module
(:mod:`flamefuse.codegen.prelude`): it imports from flamefuse only names that
are copied along, and a module's own tables (``_BLOCK_STEPS``, ``_OPERANDS`` ...)
come in as arguments.
"""
import warnings

import numpy as np

from flamefuse.blas_call import _DTYPES, _PREFIX
from flamefuse.codegen.numba_blas import _upper_from_lower

_F64 = np.dtype(np.float64)


def _finite(a, name):
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must not contain infs or NaNs (check_finite=True); "
                         "pass check_finite=False to skip this check")


def _precision(a, name):
    """The LAPACK precision an operand is computed in: its own, float64 for integers."""
    if a.dtype.char in _PREFIX:
        return a.dtype
    if a.dtype.kind in "biu":
        return _F64
    if a.dtype.kind == "f" and a.dtype.itemsize < 4:
        return np.dtype(np.float32)
    raise TypeError(f"{name} must hold numbers of a LAPACK precision ({_DTYPES}; integers are "
                    f"converted to float64), got dtype {a.dtype}")


def _prepare(a, name, kind, writes, overwrite, check_finite, flip_ok, dtype):
    """(the array the kernel works on, flipped): the caller's memory where that is allowed and
    free (Fortran order, or C order through a transpose identity when ``flip_ok``: real data
    only), else a copy in ``dtype``."""
    if check_finite:
        _finite(a, name)
    if kind == "vector":
        if a.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array, got shape {a.shape}")
        mine = a.dtype == dtype and a.flags.c_contiguous and (not writes or (overwrite and a.flags.writeable))
        return (a if mine else np.array(a, dtype=dtype)), False
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {a.ndim}-D")
    usable = a.dtype == dtype and (not writes or (overwrite and a.flags.writeable))
    if usable and a.flags.f_contiguous:
        return a, False
    if usable and flip_ok and a.flags.c_contiguous and dtype.kind != "c":
        return a.T, True
    return np.array(a, dtype=dtype, order="F"), False



def _result(a, form, flipped):
    """The value NumPy/SciPy return: a lower factor with zeros above, a full symmetric matrix."""
    if form in ("lower", "symmetric") and a.shape[0] > 1:
        _upper_from_lower(a, form == "symmetric")
    return a.T if flipped and form in ("full", "symmetric") else a


def _scipy_call(spec, table, variants, default, variant, operands, overwrite, check_finite, block_size):
    """The SciPy-style call of a generated module (see its ``<spec>`` function and
    :mod:`flamefuse.codegen.scipy_style`): ``table`` is (per operand (name, kind, written,
    C order usable through a transpose), the returned (operand, form)s, returns the pivots,
    what a failure raises), ``variants`` and ``default`` the module's ``VARIANTS`` and ``DEFAULT``."""
    operands_table, results, returns_piv, on_info = table
    if variant is None:
        fn = default
    elif variant in variants:
        fn = variants[variant]
    else:
        raise ValueError(f"unknown variant {variant!r} of {spec}: choose one of {', '.join(variants)}")
    given = [np.asarray(x) for x in operands]
    dtype = np.result_type(*[_precision(a, o[0]) for a, o in zip(given, operands_table)])
    arrays, flips = [], []
    for x, (name, kind, writes, flip_ok) in zip(given, operands_table):
        a, flipped = _prepare(x, name, kind, writes, overwrite.get(name, False), check_finite, flip_ok, dtype)
        arrays.append(a)
        flips.append(flipped)
    piv = np.empty(arrays[0].shape[0], np.int32) if returns_piv else None
    info = fn(*arrays, block_size=block_size, **({"piv": piv} if piv is not None else {}))
    if info > 0:
        _failed(spec, info, on_info)
    names = [o[0] for o in operands_table]
    out = [_result(arrays[names.index(name)], form, flips[names.index(name)]) for name, form in results]
    if returns_piv:
        out.append(piv)
    return out[0] if len(out) == 1 else tuple(out)


def _failed(spec, info, on_info):
    """Warn (``on_info`` "warn": a bare LU, like ``lu_factor``) or raise LinAlgError ("spd": not
    positive definite; "singular") for the info > 0 of a kernel."""
    if on_info == "warn":
        from scipy.linalg import LinAlgWarning
        warnings.warn(f"{spec}: diagonal number {info} is exactly zero: singular matrix", LinAlgWarning, stacklevel=4)
        return
    if on_info == "spd":
        raise np.linalg.LinAlgError(f"{spec}: the leading minor of order {info} is not positive definite")
    raise np.linalg.LinAlgError(f"{spec}: singular matrix (zero pivot or diagonal element at row {info})")
