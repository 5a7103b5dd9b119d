"""The dtypes the generated kernels compile, and which operations take complex operands.

A lazy operation is recorded only when every dtype it computes in is one of
:data:`KERNEL_DTYPES` (Numba's: bool, the signed and unsigned integers, float32,
float64, complex64, complex128); float16, longdouble, complex256, object, datetime
and strings run as NumPy (:func:`flamefuse.lazy.eager.fallback`). Complex operands fuse
only through the operations Numba compiles for them (:data:`COMPLEX_UFUNCS`,
:data:`COMPLEX_REDUCTIONS`: NumPy's meaning); :func:`fusable` asks both questions.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


KINDS = "biuf"
# complex arrays fuse through the operations Numba compiles for complex operands (NumPy's meaning)
COMPLEX_UFUNCS = frozenset({"add", "subtract", "multiply", "true_divide", "divide", "negative", "positive",
                            "square", "equal", "not_equal", "sqrt", "exp", "log", "log10", "sin", "cos",
                            "tan", "sinh", "cosh", "tanh", "isnan", "isinf", "isfinite", "copy", "power"})
COMPLEX_REDUCTIONS = frozenset({"sum", "prod", "mean"})
_COMPLEX_FUSED = COMPLEX_UFUNCS | COMPLEX_REDUCTIONS


# the dtypes the generated kernels compile (Numba's): float16, longdouble, complex256, object,
# datetime, strings... run as NumPy (:func:`fallback`)
KERNEL_DTYPES = frozenset(np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128"))
REAL_DTYPES = frozenset(d for d in KERNEL_DTYPES if d.kind in KINDS)
_KERNEL_NAMES = frozenset(d.name for d in KERNEL_DTYPES)


def fusable(dtype: np.dtype, name: str) -> bool:
    """A dtype the generated kernels take for this operation (complex: COMPLEX_UFUNCS / _REDUCTIONS)."""
    return dtype in KERNEL_DTYPES and (dtype.kind != "c" or name in _COMPLEX_FUSED)



@lru_cache(maxsize=1024)
def _kernel_loop(loop: tuple) -> bool:
    """Do the kernels compile every dtype of ``loop`` (names; ``str96`` is no dtype name)?"""
    return all(d in _KERNEL_NAMES for d in loop)

