"""The ``prange`` kernel of :mod:`flamefuse.runtime.numba_flags` (imports Numba: only a process
that runs Numba's parallel kernels imports this module). Module-level, so Numba caches it on
disk (a closure was compiled again in every process: 3.5 s)."""
from __future__ import annotations

from llvmlite import ir
from numba import get_num_threads, njit, prange, types  # noqa: F401  (get_num_threads: re-exported)
from numba.core import cgutils
from numba.extending import intrinsic


def _external(name: str):
    """libm's ``int name(int)`` (``fetestexcept``, ``feclearexcept``) called from a kernel, by
    symbol (no address baked in, so the kernel can be cached)."""
    @intrinsic
    def call(typingctx, mask):
        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32)])
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            return builder.call(fn, args)
        return types.int32(types.int32), codegen
    return call


fetest = _external("fetestexcept")
feclear = _external("feclearexcept")


@njit(parallel=True, cache=True)
def team(out, mask):
    """Each of Numba's threads (one iteration each): its raised flags of ``mask``, then cleared."""
    for i in prange(out.size):
        out[i] = fetest(mask)
        feclear(mask)
