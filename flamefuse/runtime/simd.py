"""Element functions that NumPy computes faster than a fused kernel can: run them as NumPy's call.

A fused kernel computes a transcendental function (``exp``, ``log``, ``tanh``, ``arctan2``,
a general ``power`` ...) one element at a time through the C library's scalar routine.
NumPy 2 dispatches many of the same ufuncs to SIMD loops when the CPU has the instructions
(AVX2, AVX-512). Fusing such an operation saves passes over memory and loses the SIMD loop.

**The rule** (:func:`numpy_faster`). An operation of at least :data:`MIN_ELEMENTS` elements on
one of :data:`CANDIDATES`, whose NumPy loop for those dtypes is a SIMD one on this CPU
(``numpy.lib.introspect.opt_func_info``: its ``current`` target is not the baseline), runs at
once as NumPy's own ufunc call (its inputs' pending work is flushed first) when the cost model
(:func:`pays`, :func:`split_pays`) predicts it cheaper than inside the kernel by
:data:`MARGIN`. The result is NumPy's own, bit for bit, with NumPy's warnings; the rest of the
kernel is fused as before.

**The cost model**, per element (seconds):

    split = NumPy's time for the function  +  2 x a copy's time at this size  +  FLUSH_S / size
    fused = the kernel's scalar time for the function / the kernel's threads

* NumPy's time is measured (:func:`flamefuse.runtime.adapt.per_element`, adaptive fusion's
  timer and its cache ``numpy-costs.json``, once per machine) on :data:`TIMING_ELEMENTS`
  elements (in cache: the function's own cost); the copy is measured the same way at the
  operation's size (the two memory passes the split adds: the function's input written by the
  kernel before it and its result read by the kernel after it; NumPy's own read and write are
  about one such copy, counted in its time at size).
* ``FLUSH_S`` (adaptive fusion's fixed cost of a flush) is paid once more: the split ends a kernel.
* The kernel's scalar time per element, one thread, is :data:`KERNEL_NS` (measured: a Numba
  loop of ``np.f(x[i])``, what a fused kernel compiles to, on the 2-core AMD EPYC machine,
  2026-11-26); a function not listed costs :data:`flamefuse.runtime.teamcost.CALL_NS`. A
  fused kernel of that size runs on :data:`flamefuse.runtime.chunks.CHUNKS` threads.

So on a machine with many cores the kernel wins where NumPy's single thread does not keep up,
and where NumPy's loop is no faster than the C library's nothing is split.

**Measured** (2026-11-26, the 2-core AMD EPYC machine, AVX-512, NumPy 2.4.6; the machine shared,
load average 4-9 throughout). ``opt_func_info`` names an ``X86_V4`` loop for float64 ``sin``,
``cos``, ``tanh``, ``exp``, but NumPy's float64 ``sin``/``cos`` run at the C library's speed (7.3
and 7.5 ns per element on [1, 2], 13-28 ns under load or on wide arguments; the kernel 7.3 and
7.6): only their float32 loops are SIMD (0.4 ns). float64 ``tanh`` 0.73 ns in NumPy against 7.5
in the kernel, ``arctan2`` 1.25 against 9.7, ``exp`` 0.54 against 2.9, ``log`` 0.51 against 2.4
(NumPy's call on 65536 elements, best of 15, beside :data:`KERNEL_NS`'s loops).
On 2 threads the model splits float64 ``tanh``, ``arctan``, ``arctan2``, ``tan``, ``sinh``,
``arcsinh``, ``cbrt`` at 65536 elements or more, ``cosh``, ``expm1``, ``log10``, ``log1p``,
``power``, ``arccosh``, ``arctanh`` from about 262144, never ``exp``, ``exp2``, ``log``,
``log2``, ``sin``, ``cos``, ``arcsin``, ``arccos`` (a gain under :data:`MARGIN`, or none).

On the corpus (benchmarks/corpus) that changes sobel's and arc_distance's ``arctan2`` only
(black_scholes', asian_option's, attention's and mlp_forward's ``exp``/``log`` stay fused; the
other programs have no candidate of 65536 elements: their runs are the same). ``flamefuse bench
corpus_compare`` of one checkout, ``--env off:FLAMEFUSE_NUMPY_SIMD=0`` against ``auto`` (kernel
time, NumPy / fused, best of 7 rounds after 4 settling runs, load 1.9-2.5): sobel 1.17x -> 1.98x,
arc_distance 0.96x -> 1.00x, and two programs whose code does not change, black_scholes 3.41x /
3.96x and mlp_forward 1.03x / 1.02x (the noise: adaptive fusion's mode flips with the load);
best of 9 at load 5-6: sobel 0.89x -> 1.00x, arc_distance 0.99x -> 1.21x; best of 3 under
``FLAMEFUSE_ADAPT=0`` (every script fused, load 5-8): sobel 1.19x -> 2.20x, arc_distance 1.23x ->
1.42x. Splitting every candidate with a SIMD loop (``1``, sin and cos included) lost there:
sobel 0.49x, arc_distance 0.84x, black_scholes 4.35x -> 3.61x. CPU time (user and system,
whole process, best of 3, ``FLAMEFUSE_ADAPT=0``, load 4-5): sobel 0.67 s -> 0.62 s, quasicrystal
1.41 s -> 1.19 s (NumPy 0.62 s and 1.25 s).

quasicrystal (benchmarks/programs) computes 94.5 million float64 ``cos`` and 13.5 million
``tanh``; the model splits the ``tanh`` and keeps the ``cos`` fused. At load 2.5 (best of 7,
side by side): NumPy 1.04 s; without the split the fused run took 1.29-1.32 s, so adaptive
fusion runs it as NumPy (1.01x); with it 0.86-0.90 s (1.21x). Beyond the ``tanh``'s own cost
(about 0.1 s on one thread) the split ends each frame's flush, where one flush held all six
frames (319 operations). At load 4-5 one round measured 1.91x against 1.68x, another at 5-7
1.00x against 0.96x: only the kernel's two threads make the ``cos`` faster than NumPy's.

**History.** The split was once always on (``1``) and then off by default: a program that calls
its kernels once paid the first call of every kernel in the process (Numba's loading), and
the split makes more kernels (black_scholes 2.68x -> 1.13x NumPy). Kernels are native
libraries now, loaded by ``ctypes`` in well under a millisecond.
"""
from __future__ import annotations

from functools import lru_cache

from flamefuse import switches

CANDIDATES = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "sinh",
    "cosh", "arctan", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "cbrt", "arctan2", "power"})
MIN_ELEMENTS = 1 << 16
TIMING_ELEMENTS = 1 << 14      # NumPy's time for a function is measured on this many elements
MARGIN = 0.25                  # the split must be predicted at least this much cheaper
_CODES = {"float32": "f", "float64": "d"}
# the fused kernel's time per element of one call, one thread, ns (float64, float32): a Numba
# loop ``o[i] = np.f(x[i])`` on 65536 elements of [1, 2] ([0.1, 0.9] for arcsin, arccos,
# arctanh), best of 15, 2-core AMD EPYC (AVX-512), 2026-11-26, load average 2.4
KERNEL_NS = {
    "exp": (2.9, 1.7), "exp2": (1.7, 1.2), "expm1": (5.0, 6.7), "log": (2.4, 1.7),
    "log2": (2.4, 1.5), "log10": (4.3, 3.6), "log1p": (4.0, 5.2), "sin": (7.3, 2.1),
    "cos": (7.6, 1.8), "tan": (8.2, 10.0), "tanh": (7.5, 8.5), "sinh": (8.7, 9.5),
    "cosh": (3.9, 3.8), "arctan": (7.2, 4.5), "arcsin": (2.8, 2.8), "arccos": (3.1, 3.5),
    "arcsinh": (8.6, 9.5), "arccosh": (6.6, 7.6), "arctanh": (7.0, 8.0), "cbrt": (7.7, 7.8),
    "arctan2": (9.7, 7.7), "power": (8.1, 3.1)}


def numpy_faster(name: str, loop: tuple, size: int) -> bool:
    """Is NumPy's own call faster than fusing ``name`` on ``size`` elements of dtypes ``loop``
    (names: inputs..., result)?"""
    if size < MIN_ELEMENTS or name not in CANDIDATES:
        return False
    mode = switches.text("FLAMEFUSE_NUMPY_SIMD")
    if mode == "0" or not simd_loop(name, loop):
        return False
    return mode == "1" or pays(name, loop, size)


def pays(name: str, loop: tuple, size: int) -> bool:
    """The cost model's answer for this machine: NumPy's time measured, the kernel's from
    :data:`KERNEL_NS`, on :data:`~flamefuse.runtime.chunks.CHUNKS` threads."""
    from flamefuse.runtime import adapt
    from flamefuse.runtime.chunks import CHUNKS
    dt = loop[-1]
    numpy_s = adapt.per_element("ew", name, loop, TIMING_ELEMENTS)
    kernel_s = kernel_seconds(name, dt)
    if not split_pays(numpy_s, 0.0, kernel_s, CHUNKS, size):
        return False                # lost without the memory passes: the copy is not timed
    copy_s = adapt.per_element("ew", "copy", (dt, dt), size)
    return split_pays(numpy_s, copy_s, kernel_s, CHUNKS, size)


def split_pays(numpy_s: float, copy_s: float, kernel_s: float, threads: int, size: int) -> bool:
    """Whether NumPy's call (``numpy_s`` per element) plus two memory passes (``copy_s`` per
    element each) and one more flush is cheaper by :data:`MARGIN` than the kernel's scalar
    function (``kernel_s`` per element on one thread) shared by ``threads`` threads, on ``size``
    elements."""
    from flamefuse.runtime.adapt import FLUSH_S
    split = numpy_s + 2 * copy_s + FLUSH_S / max(size, 1)
    return split * (1 + MARGIN) <= kernel_s / max(threads, 1)


def kernel_seconds(name: str, dtype: str) -> float:
    """The fused kernel's time per element of ``name`` on one thread (:data:`KERNEL_NS`)."""
    from flamefuse.runtime.teamcost import CALL_NS
    ns = KERNEL_NS.get(name)
    return (CALL_NS if ns is None else ns[dtype == "float32"]) * 1e-9


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
