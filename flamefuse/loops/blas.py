"""NumPy's own ``cblas_ddot`` and ``cblas_dgemv``: the addresses of the functions NumPy's float64
dot products call.

NumPy (2.x, built with its bundled ``scipy-openblas``) computes ``np.dot(u, v)`` and ``u @ v`` of
two 1-D float64 arrays through ``DOUBLE_dot`` (its ``arraytypes``), which calls the bundled
OpenBLAS's ``cblas_ddot`` (exported as ``scipy_cblas_ddot64_``: 64-bit integers) when both
strides are positive multiples of the item size, and else sums ``a[i] * b[i]`` in order. A
compiled loop (:mod:`flamefuse.loops.numba_parts`) makes the same choice and calls the same
function, so its dot products are NumPy's, bit for bit, in this process and with this BLAS
thread count.

``matmul`` of a 1-D and a 2-D float64 operand (``u @ M``, ``M @ v``) calls the same library's
``cblas_dgemv`` (``scipy_cblas_dgemv64_``) when its strides allow (``DOUBLE_gemv`` of
``numpy/_core/src/umath/matmul.c.src``; the choice is :mod:`flamefuse.loops.numba_parts`'s
``_vecmat``).

``ddot_address() -> int | None`` and ``dgemv_address() -> int | None``: the function's address, found in the shared library NumPy
has loaded (read from ``/proc/self/maps``, opened again with ``ctypes``: the same handle), or
None when NumPy was not built that way (another BLAS, another platform): compiled loops then
refuse dot products (the loop runs as written). Only this process's address: it is passed to
the compiled loop at each call, never compiled in.
"""
from __future__ import annotations

import os

_SYMBOLS = {"ddot": "scipy_cblas_ddot64_", "dgemv": "scipy_cblas_dgemv64_"}
_FOUND: dict = {}
_HANDLE: list = []       # the library's ctypes handle, kept


def _numpy_blas_path() -> str | None:
    """The path of the OpenBLAS library NumPy's extension loaded (Linux), else None."""
    import numpy as np
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
    except (AttributeError, KeyError, TypeError):
        return None
    if blas.get("name") != "scipy-openblas" or "USE64BITINT" not in str(blas.get("openblas configuration", "")):
        return None
    libs = os.path.realpath(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs"))
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if "scipy_openblas64_" in path and os.path.dirname(os.path.realpath(path)) == libs:
                    return path
    except OSError:
        return None
    return None


def ddot_address() -> int | None:
    """The address of NumPy's own ``cblas_ddot`` (see the module doc), or None."""
    if "ddot" not in _FOUND:
        _FOUND["ddot"] = _find(_SYMBOLS["ddot"])
    return _FOUND["ddot"]


def dgemv_address() -> int | None:
    """The address of NumPy's own ``cblas_dgemv`` (see the module doc), or None."""
    if "dgemv" not in _FOUND:
        _FOUND["dgemv"] = _find(_SYMBOLS["dgemv"])
    return _FOUND["dgemv"]


def _find(name: str) -> int | None:
    import ctypes
    path = _numpy_blas_path()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    except (OSError, AttributeError):
        return None
    fn = getattr(lib, name, None)
    if fn is None:
        return None
    _HANDLE.append(lib)
    return ctypes.cast(fn, ctypes.c_void_p).value
