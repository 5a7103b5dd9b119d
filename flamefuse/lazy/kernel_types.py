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
# -- only those whose kernel gives NumPy's bits: Numba's complex division, log, log10, tan, tanh,
# complex64 sqrt and general power round differently from NumPy's (a third to nine tenths of
# random operands differed in the last bit); its complex sqrt, exp, sin, cos, sinh and cosh give
# other bits or NaNs where NumPy's libm gives an infinity with a zero (``exp(710+0j)``: NumPy's
# ``inf+0j``, Numba's ``inf+nanj``; ``sqrt(1j)`` differed in the last bit); NumPy's complex power
# (``np.power(z, 2)``: unfused products, ``z ** 4``: binary powering) is not the kernel's fma
# square; a kernel's complex sum adds in another order than NumPy's pairwise sum. Those run as
# NumPy. ``multiply``/``square`` (the operator's ``z ** 2``) use NumPy's rounding
# (:mod:`flamefuse.runtime.npcomplex`) and fuse only where it is known (:func:`fusable`).
COMPLEX_UFUNCS = frozenset({"add", "subtract", "multiply", "negative", "positive",
                            "square", "equal", "not_equal", "isnan", "isinf", "isfinite", "copy"})
COMPLEX_REDUCTIONS = frozenset({"prod"})
_COMPLEX_MULTIPLIES = frozenset({"multiply", "square"})
_COMPLEX_BY_NUMPY = frozenset({"true_divide", "divide", "reciprocal", "log", "log10", "tan", "tanh",
                               "sqrt", "exp", "sin", "cos", "sinh", "cosh", "power", "sum", "mean"})
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
    if dtype not in KERNEL_DTYPES:
        return False
    if dtype.kind != "c":
        return True
    if name not in _COMPLEX_FUSED:
        return False
    if name in _COMPLEX_MULTIPLIES:
        from flamefuse.runtime import npcomplex
        return npcomplex.mode() is not None
    return True



@lru_cache(maxsize=1024)
def _kernel_loop(loop: tuple) -> bool:
    """Do the kernels compile every dtype of ``loop`` (names; ``str96`` is no dtype name)?"""
    return all(d in _KERNEL_NAMES for d in loop)



def by_numpy_for_its_bits(dtype: np.dtype, name: str) -> bool:
    """Is ``name`` of a complex ``dtype`` one that runs as NumPy's own call because the kernel
    would round otherwise (not because it cannot run it)? Such a call gives no
    ``FallbackWarning``: its result is the point, not a missed fusion."""
    if dtype.kind != "c" or dtype not in KERNEL_DTYPES:
        return False
    return name in _COMPLEX_BY_NUMPY or \
        (name in _COMPLEX_MULTIPLIES and not fusable(dtype, name))
