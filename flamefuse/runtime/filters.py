"""Recorded segments with filters, run by clustering (Robinson et al.) instead of WSP blocks.

The lazy front end records boolean-mask selection ``x[mask]`` as an op of
kind ``"select"`` whose result is a *selection base* (flat, length known only
after it runs), elementwise ops over selections as ``"sew"`` and full
reductions over them (sum, prod, min, max, any, all, mean, and ``count`` for
``.size``) as ``"sreduce"``; operand conventions are the recorder's, a
selection read as ``(Base, None)`` and a broadcast 0-d value as
``(Base, View)`` with shape ``()``.

:func:`run_segment` runs one run of non-product ops (a recorder stage). It is
used for every stage that contains a selection op, and for every stage when
the partitioner is :data:`NAME` (``"cluster"``). Steps:

1. :func:`convert` (in :mod:`.filter_program`) turns the ops into a
   combinator program of :mod:`flamefuse.cluster`: an elementwise op over
   whole contiguous arrays becomes a ``map``, a full reduction a ``fold``, a
   selection a ``filter`` (reading the source and the mask), and every other
   op (views, in-place updates, axis reductions) a host ``external``
   barrier. Sizes are given directly: one flexible size per flat length, one
   rigid size per selection mask (selections by one mask share it, so
   ``x[m] + z[m]`` is a map).
2. The clustering ILP (CP-SAT; the pull-stream baseline above
   :data:`MAX_ILP` nodes) partitions it; a cluster the loop generator cannot
   run as one loop is split into single nodes.
3. Each cluster becomes one loop (:mod:`.filter_kernel`; its native library when one was
   built, :mod:`.filter_native`; else, compiling in the background (the default,
   :mod:`flamefuse.runtime.compiler`), its recorded ops as NumPy's own calls while the
   background compiler builds the library (:func:`flamefuse.runtime.filter_numpy.run`:
   NumPy's outputs, bits, warnings and errors; no Numba in the script's process); else
   (``FLAMEFUSE_COMPILE=inline``, or a loop with no native form) Numba's, compiled here, and
   the library is wanted): a filter
   sets a keep flag and advances a counter, ops over its result run under
   the flag at the counter's index, folds are scalar accumulators; an array
   is stored only when a later cluster or Python reads it. An external runs
   its ops through the ordinary runtime (``run_plain``, WSP with the
   ``greedy`` partitioner, or the configured one when it is a WSP name).

Plans are cached by the segment's structure (like the runtime's merge
cache), so a loop body recorded each iteration is clustered and compiled
once; they are kept on disk like flush plans (:mod:`flamefuse.runtime.plan_cache`, the
segment's key under the partitioner name :data:`PLAN_KIND`; the record is
:mod:`flamefuse.runtime.filter_plain`'s plain values), so a warm run neither imports OR-Tools
nor solves the clustering ILP (``plans_loaded`` counts them). ``STATS`` counts segments, plans built and reused, loops run, arrays
they stored (``stored``; fold results not counted), loops run in parallel
chunks (``parallel_loops``) and externals run.
``min``/``max`` of an empty selection, like NumPy, is an error: the
``ValueError`` is raised at the end of the flush that computed it
(:func:`raise_deferred`); ``mean`` of an empty selection is ``nan`` with
NumPy's ``RuntimeWarning``. A loop that raised a floating-point flag NumPy's error state warns
of (``x[m] / 0``) gives NumPy's warnings: its ops run again as NumPy's calls
(:mod:`flamefuse.runtime.filter_numpy`).
"""
from __future__ import annotations

import warnings
from collections import Counter
from functools import lru_cache

import numpy as np

from flamefuse.runtime import fpflags
from flamefuse.runtime.numpy_program import flagged, watching
from flamefuse.runtime.recorded import recorded
from flamefuse.runtime.program import dtype_name

NAME = "cluster"
MAX_ILP = 40
PLAN_KIND = "filters"          # the plan cache's partitioner field of a clustered segment's plan
SELECT_KINDS = frozenset({"select", "sew", "sreduce"})
STATS = Counter()
DEFERRED_ERRORS: list[str] = []
_PLANS: dict = {}


def needs_clustering(group, partitioner: str) -> bool:
    """Whether a recorded stage goes through :func:`run_segment`."""
    return partitioner == NAME or any(op.kind in SELECT_KINDS for op in group)


def raise_deferred() -> None:
    """Raise the first error a flush deferred (an empty min/max), clearing the list."""
    if DEFERRED_ERRORS:
        message = DEFERRED_ERRORS[0]
        DEFERRED_ERRORS.clear()
        raise ValueError(message)


def _key(group, later: set):
    """The segment's structure (bases numbered by first use) and its bases and scalars."""
    numbers, bases, scalars, ops = {}, [], [], []

    def ref(x):
        if hasattr(x[0], "live"):
            b = x[0]
            if id(b) not in numbers:
                numbers[id(b)] = len(bases)
                bases.append(b)
            return (numbers[id(b)], x[1])
        scalars.append(x[0])
        return ("s", len(scalars) - 1, x[1])
    for op in group:
        ops.append(recorded(op.kind, op.name, ref(op.out), tuple(ref(x) for x in op.ins), op.shape,
                            op.loop, op.axis))
    infos = tuple((dtype_name(b.dtype), b.size, b.data is None, b.live == 0 and id(b) not in later)
                  for b in bases)
    return (tuple(ops), infos), bases, scalars


def plan_segment(key):
    """The cached plan of a segment's structure: from memory (merge cache), else from the disk
    (:mod:`flamefuse.runtime.plan_cache`, ``plans_loaded``), else a new one, then stored there."""
    plan = _PLANS.get(key)
    if plan is not None:
        STATS["plan_hits"] += 1
        return plan
    from flamefuse.runtime import plan_cache
    from flamefuse.runtime.filter_plain import plan_of, record
    plan = plan_of(plan_cache.load(key, PLAN_KIND))
    if plan is not None:
        STATS["plans_loaded"] += 1
    else:
        from flamefuse.runtime.filter_program import make_plan
        plan = make_plan(key[0], key[1], MAX_ILP)
        STATS["plans_built"] += 1
        plan_cache.store(key, PLAN_KIND, record(plan))
    _PLANS[key] = plan
    return plan


def run_segment(group, partitioner: str, later: set, run_plain) -> None:
    """Run one recorded stage by clustering; ``run_plain(ops, partitioner, later)`` runs
    an external's ops through the WSP runtime (the recorder's ``_run_fused``)."""
    from flamefuse.runtime.partition import PARTITIONERS
    STATS["segments"] += 1
    key, bases, scalars = _key(group, later)
    plan = plan_segment(key)
    plain = partitioner if partitioner in PARTITIONERS else "greedy"
    counts: dict = {}
    for step in plan.steps:
        if step.loop is None:
            STATS["externals"] += 1
            keep = later | {id(b) for k, b in enumerate(bases) if k in step.keep}
            run_plain([group[i] for i in step.ops], plain, keep)
            continue
        n, args, fresh = _arguments(step.loop, bases, scalars, counts)
        fn = _kernel(step.loop.source, args)
        if fn is None:          # its library is being built: NumPy's calls meanwhile
            from flamefuse.runtime import compiler, filter_numpy
            if filter_numpy.run([group[i] for i in step.ops], step.loop, bases, counts, DEFERRED_ERRORS):
                compiler.STATS["deferred_loops"] += 1
                compiler.STATS["deferred_loop_ops"] += len(step.ops)
                continue
            from flamefuse.runtime.kernel import compile_kernel
            fn = compile_kernel(step.loop.source)       # a form NumPy's calls here do not run
            # (that run wrote nothing: the arguments made above are still this loop's)
        STATS["loops"] += 1
        STATS["stored"] += sum(1 for spec in step.loop.args
                               if spec[0] == "out" and spec[2] is None)
        STATS["parallel_loops"] += step.loop.parallel
        watch, collect = watching()
        with collect:
            _run_loop(step.loop, fn, n, args, fresh, bases, counts)
        bits = flagged(watch, step.loop.parallel)
        if bits:
            from flamefuse.runtime import filter_numpy
            filter_numpy.warn([group[i] for i in step.ops], bits)


def _kernel(source: str, args: list):
    """The loop's kernel for these arguments: its native library when one was built
    (:mod:`flamefuse.runtime.filter_native`; ``native_loops`` counts the loops it ran); else,
    compiling in the background (:func:`flamefuse.runtime.compiler.background`), None while the
    background compiler builds the library (it is wanted: :func:`_background`); else Numba's
    (the library is then wanted: built after the script). A loop with no native form, or one
    that cannot be built, compiles inline through Numba in either mode."""
    from flamefuse.runtime import native
    from flamefuse.runtime.kernel import compile_kernel, jit_enabled
    if not (jit_enabled() and native.enabled()):
        return compile_kernel(source)           # its own memory cache (per JIT mode)
    from flamefuse.sigcodes import signature
    sig = signature([np.int64(args[0])] + args[1:])
    if sig is None:
        return compile_kernel(source)
    key = (source, sig)
    fn = _KERNELS.get(key)
    if fn is None:
        from flamefuse.runtime import compiler, filter_native
        fn = native.find(source, sig)
        if fn is not None:
            _NATIVE.add(key)
        elif compiler.background():
            fn = _background(source, sig)
            if fn is None:
                return None
            if fn is compiler.INLINE:
                fn = compile_kernel(source)
            else:
                _NATIVE.add(key)
        else:
            fn = compile_kernel(source)
            if not native.cannot_build(source, sig):
                native.want(filter_native.FilterCode(source), sig)
        _KERNELS[key] = fn
    if key in _NATIVE:
        STATS["native_loops"] += 1
    return fn


def _background(source: str, sig: tuple):
    """:func:`flamefuse.runtime.compiler.library` of the loop: its launcher, ``INLINE``, or None
    while it is built. The worker reads the loop's text from the user's cache (a job names
    modules, never code: :meth:`flamefuse.runtime.filter_native.FilterCode.of`), so the text is
    written there first, once per process, as the inline compile writes it."""
    from flamefuse.runtime import compiler, filter_native
    if source not in _WRITTEN:
        from flamefuse import store
        from flamefuse.cache import cached_source
        name = filter_native.module_name(source)
        if cached_source("kernels", name) != source and store.put("kernels", name, source, ".py") is None:
            return compiler.INLINE          # no cache folder to hand it over: compiled here
        _WRITTEN.add(source)
    return compiler.library(filter_native.FilterCode(source), sig)


_KERNELS: dict = {}         # (source, signature) -> the loop's kernel
_NATIVE: set = set()        # the keys whose kernel is a native library
_WRITTEN: set = set()       # loop texts written to the cache for the background compiler


@lru_cache(maxsize=1)
def _empty_mean_text() -> str:
    """NumPy's own warning text for the mean of an empty array (NumPy 2.4: no full stop)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="ignore"):
            np.mean(np.zeros(0))
    return next((str(w.message) for w in caught if "empty" in str(w.message)), "Mean of empty slice")


def _arguments(loop, bases, scalars, counts) -> tuple[int, list, dict]:
    """``(n, args, fresh)``: the loop's length, its kernel's arguments (``n`` first) and the
    fresh output buffers among them (by base number)."""
    n = loop.length if isinstance(loop.length, int) else counts[loop.length]
    args = [n]
    fresh = {}
    for spec in loop.args:
        tag = spec[0]
        if tag == "in":
            data = bases[spec[1]].data
            args.append(data[spec[2]:] if spec[2] else data)
        elif tag == "scalar":
            args.append(bases[spec[1]].data[spec[2]:spec[2] + 1])
        elif tag == "const":
            args.append(fpflags.scalar_arg(np.dtype(spec[2]).type, scalars[spec[1]]))
        else:
            _, b, size = spec
            buf = np.empty(n if size is None else size, bases[b].dtype)
            fresh[b] = buf
            args.append(buf)
    return n, args, fresh


def _run_loop(loop, fn, n: int, args: list, fresh: dict, bases, counts) -> None:
    result = fn(*args)
    if result is None:          # a native library's kernel did not finish: Numba's runs it
        from flamefuse.runtime.kernel import compile_kernel
        result = compile_kernel(loop.source)(*args)
    found = dict(zip(loop.groups, result[1:]))
    counts.update(found)
    for b, buf in fresh.items():
        dom = loop.trim.get(b)
        if dom is not None:
            m = int(n if dom == loop.length else found.get(dom, counts.get(dom, n)))
            buf = buf[:m]
            bases[b].size = m
        bases[b].data = buf
    for b, dom, what in loop.checks:
        m = int(n if dom == loop.length else found.get(dom, counts.get(dom, n)))
        if m:
            continue
        if what == "mean":
            warnings.warn(_empty_mean_text(), RuntimeWarning, stacklevel=6)
        else:
            DEFERRED_ERRORS.append(f"zero-size array to reduction operation {what} "
                                   "which has no identity")
