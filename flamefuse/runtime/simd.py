"""Element functions that NumPy computes faster than a fused kernel can: run them as NumPy's call.

A fused kernel computes a transcendental function (``exp``, ``log``, ``tanh``, ``arctan2``,
a general ``power`` ...) one element at a time through the C library's scalar routine: 7 to 50
ns per element on the 2-core x86-64 machine of docs/never-slower.md. NumPy 2 dispatches the
same ufuncs to SIMD loops when the CPU has the instructions (AVX2, AVX-512): about 1 ns per
element there, 5x (``exp``) to 50x (``arctanh``) faster. Fusing such an operation saves a
pass over memory (about 1 ns per element) and loses the SIMD loop: a net loss. Sobel's
``np.arctan2(gy, gx)`` on 9 million elements took 0.35 s inside the fused kernel against
0.05 s as NumPy's call (the whole script under NumPy: 0.42 s; fused: 0.8 s).

So an operation of at least :data:`MIN_ELEMENTS` elements on one of :data:`CANDIDATES` runs
at once as NumPy's own ufunc call (its inputs' pending work is flushed first) when NumPy's
loop for those dtypes is a SIMD one on this CPU (``numpy.lib.introspect.opt_func_info``:
its ``current`` target is not the baseline). Below that size the flush it forces costs more
than the kernel loses. The result is NumPy's own, bit for bit.

``sin`` and ``cos`` are not candidates: NumPy's float64 loops measured 14-20 ns per element,
no faster than the kernel's.

**Off by default** (``FLAMEFUSE_NUMPY_SIMD=1`` turns it on). Called repeatedly in one process,
the split is faster (sobel 0.33 to 0.22 s, black_scholes 0.169 to 0.130 s, arc_distance 0.42 to
0.32 s per call). But a program that calls its kernel once pays the first call of every kernel
in the process, and the split makes more kernels and materialises their inputs in fresh memory:
measured side by side on the corpus (one call each), black_scholes went from 2.68x to 1.13x
NumPy and sobel from 0.41x to 0.33x, arc_distance from 0.87x to 0.99x (docs/corpus-performance.md).
It can be on by default once a kernel's first call costs what its later calls do.
"""
from __future__ import annotations

from functools import lru_cache

from flamefuse import switches

# measured ratio kernel / NumPy (float64, 2M elements, AVX-512 machine) from 2x (exp2) to 51x
CANDIDATES = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tan", "tanh", "sinh", "cosh",
    "arctan", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "cbrt", "arctan2", "power"})
MIN_ELEMENTS = 1 << 16
_CODES = {"float32": "f", "float64": "d"}


def numpy_faster(name: str, loop: tuple, size: int) -> bool:
    """Is NumPy's own call faster than fusing ``name`` on ``size`` elements of dtypes ``loop``
    (names: inputs..., result)?"""
    return (size >= MIN_ELEMENTS and name in CANDIDATES and simd_loop(name, loop)
            and switches.on("FLAMEFUSE_NUMPY_SIMD"))


@lru_cache(maxsize=256)
def simd_loop(name: str, loop: tuple) -> bool:
    """Does NumPy run ``name`` for these dtypes with a SIMD loop on this CPU?"""
    code = _CODES.get(loop[-1])
    if code is None or any(d != loop[-1] for d in loop):
        return False
    try:
        from numpy.lib.introspect import opt_func_info
        target = opt_func_info(func_name=f"^{name}$").get(name, {}).get(code * len(loop), {})
    except Exception:                       # noqa: BLE001  (an older NumPy: no such table)
        return False
    current = str(target.get("current", "baseline"))
    return bool(current) and not current.startswith("baseline")
