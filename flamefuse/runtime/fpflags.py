"""The CPU's floating-point exception flags around fused kernels, as NumPy reads them.

NumPy clears the floating-point status flags before a ufunc's loop, tests them after it and then
warns (``RuntimeWarning: divide by zero encountered in divide``), raises, calls or ignores per
``np.geterr()``. A fused kernel runs the same operations, so a flush does the same around its
kernels (:func:`flamefuse.runtime.execute.run`): :func:`clear` before, :func:`raised` after,
and NumPy's warnings where a flag it watches (:func:`watched`) was raised
(:func:`flamefuse.runtime.numpy_program.warn_like_numpy`). The error states ``raise``/``call``/
``print``/``log`` never get here: operations run as NumPy's own calls while one is set
(:func:`flamefuse.lazy.eager.fp_errors_act`).

* :func:`watched` -- the NumPy categories (bits: divide 1, over 2, under 4, invalid 8, NumPy's
  ``NPY_FPE_*``) whose error state is ``warn``; 0 when every one is ``ignore``. Cached by the
  identity of NumPy's error-state object (one context-variable read, as ``fp_errors_act``).
* :func:`clear` / :func:`raised` -- this thread's flags (glibc's ``feclearexcept`` /
  ``fetestexcept`` through ``ctypes.PyDLL``: no GIL release, about 0.5 us a call) and those the
  worker threads of a native parallel kernel reported since (:data:`WORKERS`:
  :class:`flamefuse.runtime.native._Team` clears and tests each worker's own flags around its
  share, :func:`clear_thread` / :func:`thread_bits`, since flags are per thread).
* :func:`scalar_arg` -- a script's scalar as a kernel's argument type, a narrow float's
  overflow (``f32 + 1e40``) noted as a flag rather than warned there (the flush warns as NumPy).
* :func:`collecting` -- a context for kernels run as plain Python (``FLAMEFUSE_JIT=0``): they
  compute with NumPy scalars, whose operations test the flags themselves and would warn per
  element ("... in scalar divide"); under it they report to :data:`WORKERS` instead.

Where ``libm`` has no ``fetestexcept`` (not glibc's or macOS's C library), :data:`AVAILABLE` is
False and no flag is ever seen (fused kernels then give no warnings, as before).
Numba's own parallel kernels (a kernel with no native library yet, or none possible, under
``prange``) run their chunks on Numba's threads: :mod:`flamefuse.runtime.numba_flags` clears and
reads those threads' flags around such a kernel. Kernels that are not a flush's program read the
flags around themselves (:func:`flamefuse.runtime.numpy_program.watching`): a product group's
loop nest, a clustered filter loop, a group of recorded matrix products.
"""
from __future__ import annotations

import ctypes
import platform
import sys

import numpy as np

# glibc's FE_* bits per architecture: (divide by zero, overflow, underflow, invalid)
_FE_BITS = {"x86_64": (0x04, 0x08, 0x10, 0x01), "AMD64": (0x04, 0x08, 0x10, 0x01),
            "i686": (0x04, 0x08, 0x10, 0x01), "aarch64": (0x02, 0x04, 0x08, 0x01),
            "arm64": (0x02, 0x04, 0x08, 0x01)}
WORKERS = [0]       # NumPy bits the worker threads (and interpreted kernels) reported since clear()


def _libm():
    names = ("libm.so.6",) if sys.platform.startswith("linux") else ("libSystem.dylib", "libm.dylib")
    for name in names:
        try:
            lib = ctypes.PyDLL(name)
            return lib.feclearexcept, lib.fetestexcept
        except (OSError, AttributeError):
            continue
    return None


_FE = _FE_BITS.get(platform.machine())
_FUNCS = _libm() if _FE is not None else None
AVAILABLE = _FUNCS is not None
if AVAILABLE:
    _FECLEAR, _FETEST = _FUNCS
    _ALL = _FE[0] | _FE[1] | _FE[2] | _FE[3]
    _TO_NUMPY = [sum(1 << k for k in range(4) if f & _FE[k]) for f in range(_ALL + 1)]

    def clear_thread() -> None:
        _FECLEAR(_ALL)

    def thread_bits() -> int:
        """This thread's raised flags as NumPy bits."""
        return _TO_NUMPY[_FETEST(_ALL)]
else:
    def clear_thread() -> None:
        pass

    def thread_bits() -> int:
        return 0


def clear() -> None:
    WORKERS[0] = 0
    clear_thread()


def raised() -> int:
    """NumPy bits of the flags raised since :func:`clear`, this thread's and the workers'."""
    return thread_bits() | WORKERS[0]


_EXTOBJ = np._core.umath._extobj_contextvar.get
_BITS = (("divide", 1), ("over", 2), ("under", 4), ("invalid", 8))
_LAST: tuple = (None, 0)


def watched() -> int:
    """The NumPy bits of the categories whose error state is ``warn`` (0: nothing to watch)."""
    global _LAST
    state, last = _EXTOBJ(), _LAST
    if state is last[0]:
        return last[1]
    err = np.geterr()
    bits = sum(b for name, b in _BITS if err[name] == "warn")
    _LAST = (state, bits)
    return bits


_CALL_BITS = {"divide by zero": 1, "overflow": 2, "underflow": 4, "invalid value": 8}


def _collect(kind: str, flag: int) -> None:
    WORKERS[0] |= _CALL_BITS.get(kind, flag & 15)


def collecting():
    """NumPy's error state for a kernel run as plain Python: each scalar operation's error is
    collected into :data:`WORKERS` (``call``), not warned per element."""
    return np.errstate(all="call", call=_collect)


_NARROW = {np.float32: float(np.finfo(np.float32).max), np.float16: float(np.finfo(np.float16).max)}


def scalar_arg(t, v):
    """The script's scalar ``v`` as a kernel's argument type ``t``. A value out of a narrow
    float's range (``f32 + 1e40``) becomes inf without NumPy's cast warning here: the flush
    gives NumPy's own once, from the flags (:func:`flamefuse.runtime.numpy_program.warn_like_numpy`),
    so the overflow is noted as its flag (a warm run warned twice)."""
    lim = _NARROW.get(t)
    if lim is None or not abs(v) > lim:
        return t(v)
    with np.errstate(over="ignore"):
        r = t(v)
    if np.isinf(r) and not np.isinf(v):
        WORKERS[0] |= 2                     # NumPy's overflow bit
    return r
