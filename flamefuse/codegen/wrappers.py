"""What the generated modules' wrappers run in Python: checks, block sizes, the SciPy-style call.

``_check(args, block_size, steps, classes=None) -> nb`` rejects what a kernel
cannot take (TypeError / ValueError saying what to pass instead) and returns the
block size (``_block_size(n, steps)`` for None: the spec's tuned table ``steps``,
the module's ``_BLOCK_STEPS``); it keeps the Python-side cost of a call near 2
microseconds.  ``_pivots`` checks or makes a pivot vector; ``_serial(n, steps)``
/ ``_restore`` run a kernel on one BLAS thread where the table says so.
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

from flamefuse.codegen.numba_blas import _PREFIX, _SET_THREADS, _upper_from_lower

_F64 = np.dtype(np.float64)
_DTYPES = "float32, float64, complex64, complex128"
_I32 = np.dtype(np.int32)


def _serial(n, steps):
    """One BLAS thread for the calling thread while the kernel runs, where the table ``steps``
    measured that faster at n (small blocks are too small to share); returns the previous count
    (0: unchanged)."""
    if _SET_THREADS is None:
        return 0
    for edge, _, serial in steps:
        if n <= edge:
            return _SET_THREADS(1) if serial else 0
    return 0


def _restore(previous):
    if previous > 0:
        _SET_THREADS(previous)


def _block_size(n, steps):
    """The block size used at dimension ``n`` when none is given: the tuned one of the measured
    n nearest in log scale (``steps``: (up to n, block size, serial BLAS), by increasing n)."""
    for edge, nb, _ in steps:
        if n <= edge:
            return nb
    return steps[-1][1]


def _pivots(piv, n):
    """The pivot vector a pivoted kernel fills: the caller's (int32, n, contiguous) or a new one."""
    if piv is None:
        return np.empty(n, np.int32)
    if not isinstance(piv, np.ndarray) or piv.dtype != _I32 or piv.shape != (n,) or not piv.flags.c_contiguous \
            or not piv.flags.writeable:
        raise ValueError(f"piv must be a writeable contiguous int32 array of shape ({n},): "
                         f"pass numpy.empty({n}, numpy.int32)")
    return piv


def _check(args, block_size, steps, classes=None):
    """Reject what the kernels cannot take, with a message that says what to pass instead.

    ``classes``: per operand, the dimension class of its rows and columns (None: one class, every
    partitioned dimension has the same size n).  Returns the block size to use
    (``_block_size(n, steps)`` when ``block_size`` is None).
    """
    if block_size is not None:
        if type(block_size) is not int and (isinstance(block_size, bool) or not isinstance(block_size, np.integer)):
            raise ValueError(f"block_size must be a positive integer or None, got {block_size!r}")
        if block_size < 1:
            raise ValueError(f"block_size must be a positive integer or None, got {block_size!r}")
    n = None
    for arr, name, kind, partition in args:
        if type(arr) is not np.ndarray and not isinstance(arr, np.ndarray):
            raise TypeError(f"{name} must be a numpy.ndarray, got {type(arr).__name__}")
        if arr.dtype.char not in _PREFIX:
            raise TypeError(f"{name} must have dtype {_DTYPES}, got {arr.dtype}: convert it, "
                            f"e.g. {name}.astype(numpy.float64)")
        if arr.dtype != args[0][0].dtype:
            raise TypeError(f"{name} has dtype {arr.dtype} where {args[0][1]} has {args[0][0].dtype}: "
                            "the operands must have one dtype")
        flags, shape = arr.flags, arr.shape
        if kind == "vector":
            if len(shape) != 1 or not flags.c_contiguous:
                raise ValueError(f"{name} must be a contiguous 1-D array, got shape {shape}")
        else:
            if len(shape) != 2:
                raise ValueError(f"{name} must be a 2-D array, got {arr.ndim}-D")
            if not flags.f_contiguous:
                raise ValueError(f"{name} must be Fortran-ordered (column-major) and contiguous: "
                                 f"pass numpy.asfortranarray({name})")
            if partition == "2x2" and shape[0] != shape[1] and classes is None:
                raise ValueError(f"{name} must be square, got shape {shape}")
        if not flags.writeable:
            raise ValueError(f"{name} must be writeable (it is updated in place)")
        if classes is not None:
            n = _class_sizes(args, classes)
            continue
        size = shape[1] if partition == "columns" else shape[0]
        if n is None:
            n = size
        elif size != n:
            raise ValueError(f"{name} has dimension {size} where the other operands have {n}: the sizes must match")
    for k in range(len(args) - 1):
        x, nx = args[k][0], args[k][1]
        for y, ny, _, _ in args[k + 1:]:
            if np.shares_memory(x, y):
                raise ValueError(f"{nx} and {ny} must not share memory")
    return int(block_size) if block_size is not None else _block_size(n, steps)


def _class_sizes(args, classes):
    """The largest size of the dimension classes; each class's dimensions must agree."""
    sizes = {}
    for (arr, name, _, _), dims in zip(args, classes):
        for axis, c in enumerate(dims):
            if c is None:
                continue
            size = arr.shape[axis] if arr.ndim > axis else 1
            if sizes.setdefault(c, (size, name, axis))[0] != size:
                first = sizes[c]
                raise ValueError(f"{name} has dimension {size} (axis {axis}) where {first[1]} has {first[0]} "
                                 f"(axis {first[2]}): the sizes must match")
    return max(size for size, _, _ in sizes.values())


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
