"""The number of threads native kernels run on (:data:`CHUNKS`), without importing Numba.

Numba's thread count as ``numba.config`` computes it (``NUMBA_NUM_THREADS``, else the CPUs this
process may use): ``import flamefuse.lazy`` does not load Numba; the first kernel does
(:func:`flamefuse.jit.runtime_threads`). The threads native libraries run on; no kernel's
source depends on it. A module of its own so that loading a native library
(:mod:`flamefuse.runtime.native`) does not import the kernel generator
(:mod:`flamefuse.runtime.kernel`, which names it too).
"""
import os

CHUNKS = max(1, int(os.environ.get("NUMBA_NUM_THREADS") or (
    len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)))
