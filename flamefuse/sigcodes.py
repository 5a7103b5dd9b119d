"""Signature codes: the argument types a native kernel library is built for, as short strings.

A kernel library (:mod:`flamefuse.runtime.native`) is compiled for one tuple of argument types,
one code per argument, which names the library's file and the launcher that calls it:

* an array: ``'<dtype>:<ndim><w|r>'`` -- NumPy's dtype string, the number of dimensions, and
  whether it is writeable (``'<f8:2w'``: a writeable C-contiguous float64 matrix);
* a scalar: ``struct``'s letter for its NumPy type (``'d'`` float64, ``'q'`` int64, ``'B'``
  uint8, ...), no colon.

:func:`signature` writes the codes of a call's arguments (None where a library cannot take one:
a non-contiguous or misaligned array, an object element type, a complex or Python scalar;
complex arrays are pointers like any other);
:func:`code_of_array` writes one array's code and :func:`array_code` reads it back (the fused run-time kernels' entries and the loop
nests' entries both read it, so the format lives here, below both).
"""
from __future__ import annotations

import numpy as np

SCALARS = {np.float64: "d", np.float32: "f", np.int64: "q", np.int32: "i", np.int16: "h",
           np.int8: "b", np.uint64: "Q", np.uint32: "I", np.uint16: "H", np.uint8: "B"}
ARRAY_KINDS = frozenset("fiubc")         # float, signed, unsigned, bool, complex element types


def signature(args) -> tuple | None:
    """The codes of ``args``, or None if some argument cannot be passed to a library."""
    out = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            if a.dtype.kind not in ARRAY_KINDS or not a.flags.c_contiguous or not a.flags.aligned:
                return None
            out.append(code_of_array(a.dtype, a.ndim, a.flags.writeable))
        else:
            code = SCALARS.get(t)
            if code is None:
                return None
            out.append(code)
    return tuple(out)


def code_of_array(dtype: np.dtype, ndim: int, writeable: bool) -> str:
    """An array's code (``'<f8:2w'``) from its dtype, number of dimensions and writeability."""
    return f"{dtype.str}:{ndim}{'w' if writeable else 'r'}"


def array_code(code: str) -> tuple[str, int, bool] | None:
    """``(dtype, ndim, writeable)`` of an array's code (``'<f8:2w'``), None for a scalar's."""
    if ":" not in code:
        return None
    dt, rest = code.split(":")
    return dt, int(rest[:-1]), rest.endswith("w")
