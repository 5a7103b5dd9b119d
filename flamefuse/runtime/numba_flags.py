"""The floating-point flags of Numba's own worker threads (a ``prange`` kernel's chunks).

A fused kernel with no native library yet (cold, compiled inline) or with none possible (a
complex scalar argument has no C-ABI form, so such a kernel always runs through Numba) runs its
``prange`` chunks on Numba's threads, whose flags the calling thread's ``fetestexcept`` does not
see (flags are per thread): an overflow there gave no warning at all. :func:`bits` runs a small
``prange`` kernel of one iteration per Numba thread (Numba's schedulers give each thread one
share of ``get_num_threads()`` iterations; :mod:`flamefuse.runtime.numba_flags_kernel`) that
tests and clears that thread's flags through libm's ``fetestexcept`` / ``feclearexcept``
(external symbols: the kernel is cached on disk like any other) and returns the raised ones as
NumPy bits (:mod:`flamefuse.runtime.fpflags`): after each Numba ``prange`` step of a flush
(:func:`flamefuse.runtime.execute.run`), one launch more. Flags a Numba thread raised before in
other code (a filter loop or loop nest compiled by Numba, the script's own Numba code) are
counted too: with a flush's outputs all new, that only costs a NumPy run of the flush for its
warnings, which are then NumPy's own (none).
"""
from __future__ import annotations

import numpy as np

from flamefuse.runtime import fpflags

def bits() -> int:
    """NumPy bits of the flags Numba's threads raised since the last call; then cleared."""
    if not fpflags.AVAILABLE:
        return 0
    from flamefuse.runtime.numba_flags_kernel import get_num_threads, team
    out = np.zeros(max(1, get_num_threads()), np.int32)
    team(out, np.int32(fpflags._ALL))
    raised = 0
    for v in out.tolist():
        raised |= fpflags._TO_NUMPY[v & fpflags._ALL]
    return raised

