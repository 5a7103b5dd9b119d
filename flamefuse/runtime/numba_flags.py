"""The floating-point flags of Numba's own worker threads (a ``prange`` kernel's chunks).

A fused kernel with no native library yet (cold, compiled inline) or with none possible (a
complex scalar argument has no C-ABI form, so such a kernel always runs through Numba) runs its
``prange`` chunks on Numba's threads, whose flags the calling thread's ``fetestexcept`` does not
see (flags are per thread): an overflow there gave no warning at all. :func:`clear` and
:func:`bits` run a small ``prange`` kernel of one iteration per Numba thread (Numba's schedulers
give each thread one share of ``get_num_threads()`` iterations) that clears, or tests and
clears, that thread's flags through libm's ``feclearexcept`` / ``fetestexcept`` (declared as
external symbols: the kernel is cached on disk like any other); :func:`bits` returns the
raised ones as NumPy bits (:mod:`flamefuse.runtime.fpflags`). Only a process that imported
Numba calls these (:func:`flamefuse.runtime.execute.run`, around a Numba ``prange`` step).
"""
from __future__ import annotations

import numpy as np

from flamefuse.runtime import fpflags

_KERNELS: list = []


def _kernels():
    if _KERNELS:
        return _KERNELS
    from llvmlite import ir
    from numba import get_num_threads, njit, prange, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def external(name):
        @intrinsic
        def call(typingctx, mask):
            def codegen(context, builder, signature, args):
                fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32)])
                fn = cgutils.get_or_insert_function(builder.module, fnty, name)
                return builder.call(fn, args)
            return types.int32(types.int32), codegen
        return call

    fetest, feclear = external("fetestexcept"), external("feclearexcept")

    @njit(parallel=True, cache=True)
    def team(out, mask):
        for i in prange(out.size):
            out[i] = fetest(mask)
            feclear(mask)

    _KERNELS[:] = [team, get_num_threads]
    return _KERNELS


def bits() -> int:
    """NumPy bits of the flags Numba's threads raised since the last call; then cleared."""
    if not fpflags.AVAILABLE:
        return 0
    team, threads = _kernels()
    out = np.zeros(max(1, threads()), np.int32)
    team(out, np.int32(fpflags._ALL))
    raised = 0
    for v in out.tolist():
        raised |= fpflags._TO_NUMPY[v & fpflags._ALL]
    return raised


clear = bits
