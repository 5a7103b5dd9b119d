"""The Python side of a call of a generated block-algorithm kernel, without Numba.

A generated module's kernel ``_k_<variant>`` (:mod:`flamefuse.codegen.numba_target`) is called
by its wrapper through :func:`_call`: the checks (``_check``: what the kernel cannot take is
rejected with a message that says what to pass instead; the block size from the spec's tuned
table), the pivot vector (``_pivots``), the kernel's work arrays (``_work``: the scalar
arguments BLAS/LAPACK take by reference and the diagonal block's workspace, allocated here so
that the compiled kernel allocates nothing), one BLAS thread where the table says so
(``_serial`` / ``_restore``, through OpenBLAS's ``openblas_set_num_threads_local``:
``_SET_THREADS``), and the routine table of the operands' precision. The same function calls a
kernel's native library (:mod:`flamefuse.synth.native_chain`): there ``kernel`` is the
library's entry and the routine table is read from SciPy's Cython BLAS/LAPACK capsules with
``ctypes`` (the addresses Numba's ``get_cython_function_address`` gives the Numba kernels,
``_FP`` of :mod:`flamefuse.codegen.numba_blas`), so a warm run that calls a library imports no
Numba.

``_ROUTINES`` (the routines, in table order), ``_PREFIX`` (``dtype.char`` -> the precision's
routine prefix) and :func:`_routines` (a precision's (module, symbol) pairs: complex syrk is
herk) are the one list both tables are made from.

Like :mod:`flamefuse.codegen.wrappers`, this module is real (tested directly) and copied, all
but this docstring, into every generated module that uses it (:mod:`flamefuse.codegen.prelude`):
it imports numpy, scipy and the standard library only; its names start with an underscore.
"""
import numpy as np

_ROUTINES = (("blas", "gemm"), ("blas", "syrk"), ("blas", "trsm"), ("blas", "trmm"), ("lapack", "potrf"),
             ("lapack", "trtri"), ("lapack", "lauum"), ("lapack", "lacpy"), ("lapack", "getrf"),
             ("lapack", "laswp"), ("lapack", "trsyl"))
_PREFIX = {"f": "s", "d": "d", "F": "c", "D": "z"}   # dtype.char -> the precision's routines
_DTYPES = "float32, float64, complex64, complex128"
_I32 = np.dtype(np.int32)


def _routines(char):
    """The (module, symbol) of each routine of ``_ROUTINES`` in the precision ``char`` (a
    ``dtype.char``): complex syrk is herk (transposes are conjugate transposes)."""
    p = _PREFIX[char]
    return [(f"scipy.linalg.cython_{lib}", p + ("herk" if name == "syrk" and p in "cz" else name))
            for lib, name in _ROUTINES]


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


def _openblas_threads():
    """``openblas_set_num_threads_local`` of the OpenBLAS that SciPy's BLAS calls go to (it sets
    the calling thread's BLAS thread count and returns the previous one), or None where not found."""
    import ctypes
    import glob
    import os
    import scipy
    here = os.path.join(os.path.dirname(scipy.__file__), os.pardir)
    paths = glob.glob(os.path.join(here, "scipy.libs", "*openblas*")) + \
        glob.glob(os.path.join(here, "scipy", ".dylibs", "*openblas*"))
    try:
        with open("/proc/self/maps") as maps:
            paths += sorted({line.split()[-1] for line in maps if "openblas" in line and "/" in line})
    except OSError:
        pass
    for path in paths:
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
        return fn
    return None


_SET_THREADS = _openblas_threads()


def _work(dtype, nb, n):
    """The kernel's work arrays: ``iw`` (int32), ``dw`` (alpha, beta in ``dtype``), ``rw`` (real
    alpha, beta: syrk / herk), ``cw`` (characters) and ``ws`` (a diagonal block of at most
    ``nb`` x ``nb``: trsm by inverse, ul)."""
    dw = np.zeros(2, dtype)
    return (np.zeros(8, np.int32), dw, np.abs(dw), np.zeros(4, np.uint8),
            np.empty(min(nb, n) ** 2, dtype))


def _call(kernel, fp, args, table, piv, block_size, steps):
    """Check ``args`` (the operands: Fortran-ordered matrices, 1-D vectors) and run ``kernel`` on
    them; returns its info. ``fp``: the routine tables by ``dtype.char``; ``table``: the
    variant's ``(per operand (name, kind, partition), dimension classes or None, (operand,
    axis) of its size n, pivoted)``; ``piv``, ``block_size``: the wrapper's; ``steps``: the
    module's tuned table. The kernel takes each matrix transposed (C-contiguous: one Numba type
    per dtype), then the pivots, the block size, the routine table and the work arrays."""
    checks, classes, (k, axis), pivot = table
    nb = _check(tuple((a,) + tuple(c) for a, c in zip(args, checks)), block_size, steps, classes)
    n = args[k].shape[axis]
    kargs = [a if c[1] == "vector" else a.T for a, c in zip(args, checks)]
    if pivot:
        kargs.append(_pivots(piv, n))
    work = _work(args[0].dtype, nb, n)
    threads = _serial(n, steps)
    try:
        return int(kernel(*kargs, nb, fp[args[0].dtype.char], *work))
    finally:
        _restore(threads)
