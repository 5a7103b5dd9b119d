"""Plans: a partitioned, compiled program, cached by the program's structure (merge cache).

``plan_for(program, partitioner)`` returns a :class:`Plan` (blocks in
dependency order, one compiled kernel and argument list per block, the
contracted bases); equal programs (same ops, operand numbering by first use,
views, dtypes, fresh/dead flags) reuse the plan, so a loop body recorded each
iteration is partitioned and compiled once, and a plan is kept on disk between
processes (:mod:`flamefuse.runtime.plan_cache`: ``plan_loads``, ``plan_cache_s``), so
a warm run of the same script partitions nothing. ``run(plan, buffers, scalars)``
allocates (:func:`flamefuse.runtime.pool.take`) the flat buffers that are still
missing (``buffers[i] is None``) and not contracted, and calls the kernels with
each base's buffer reshaped to its :class:`~flamefuse.runtime.kernel.Grid`
(:func:`flamefuse.runtime.numpy_program.ndview` makes the NumPy view of one unwrapped
:class:`Ref`, for other executors). How each
argument is made is worked out once per plan (``Step.binds``, :func:`binders`), so a call
costs one list comprehension over ready values (no per-call type tests or ``np.uint64``).
``STATS`` counts plans built and reused and the seconds spent partitioning
(``partition_s``), generating and loading kernels (``compile_s``) and in each
step's first call, where its kernel is found for its argument types: a native library
(:mod:`flamefuse.runtime.native`, ``native_loads``; a parallel kernel too small to pay for
waking its thread team gets the library's launcher on the calling thread, ``serial_launches``:
:mod:`flamefuse.runtime.teamcost`), else Numba's compile or cache load
(``first_call_s``; of it, ``load_s`` over ``loads`` kernels is Numba's alone). Long programs
are partitioned in windows (:func:`windows`; a window's partition is memoised by its
:func:`canonical` form), and each temporary's buffer is taken from the pool just before
its first kernel and handed back after its last (``Plan.allocs``/``frees``).
"""
from __future__ import annotations

import time
from collections import Counter

import numpy as np

from flamefuse.runtime import graph as wsp
from flamefuse import sigcodes
from flamefuse.runtime import compiler, fpflags, native, numba_flags, plan_cache, pool, preload, teamcost
from flamefuse.runtime.code import Code
from flamefuse.runtime.kernel import Grid, Index, compile_kernel, generate, jit_enabled, scalar_divisors
from flamefuse.runtime.numpy_program import run as numpy_run, warn_from_numpy, warn_like_numpy
from flamefuse.runtime.partition import partition
from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
from flamefuse.runtime.views import View
from flamefuse.values import value

_set = object.__setattr__

STATS = Counter()


class _ScalarTypes(dict):
    """dtype name -> NumPy scalar type, filled on first use (``np.dtype(name)`` per call is slow)."""

    def __missing__(self, name):
        self[name] = np.dtype(name).type
        return self[name]


SCALAR_TYPES = _ScalarTypes()
_U64 = np.uint64
_PLANS: dict = {}
WINDOW = 64      # ops partitioned together at most (see windows)
SEEDED = 16      # greedy on longer windows starts from linear's blocks (its cost, cubic, falls)


@value(hidden=("entry",))
class Step:
    """One kernel call of a plan: its code and arguments (see the module doc); a frozen value
    (:mod:`flamefuse.values`) compared, hashed and shown by ``code``, ``args`` and ``binds``."""
    code: Code              # the kernel as a value (:mod:`flamefuse.runtime.code`)
    args: tuple
    binds: tuple            # per argument ``(kind, x, y)`` for :func:`run`, made from ``args``
    # the callable its first call chose (:func:`_first_call`): native library or Numba dispatcher
    entry: list

    def __init__(self, code, args):
        _set(self, "code", code)
        _set(self, "args", args)
        _set(self, "binds", binders(args))
        _set(self, "entry", [])

    @property
    def source(self) -> str:
        """The kernel's Numba module text (its identity in Numba's and the native caches)."""
        return self.code.source


def binders(args) -> tuple:
    """How :func:`run` makes each kernel argument, worked out once per plan: ``(0, base, _)`` a
    flat buffer, ``(1, base, shape)`` its reshape, ``(2, value, _)`` an index (its ``np.uint64``
    made here, once), ``(3, index, type)`` a scalar converted to its NumPy type."""
    out = []
    for a in args:
        if type(a) is Grid:
            out.append((0, a.base, None) if len(a.shape) == 1 else (1, a.base, a.shape))
        elif type(a) is Index:
            out.append((2, _U64(a.value), None))
        else:
            out.append((3, a.index, SCALAR_TYPES[a.dtype]))
    return tuple(out)


@value(hidden=("divisors",))
class Plan:
    """A flush's kernel calls in order, with the bases each allocates and frees (see the module
    doc); a frozen value (:mod:`flamefuse.values`), ``divisors`` neither compared nor shown."""
    steps: tuple[Step, ...]
    gone: frozenset
    cost: int
    # per step: the bases to allocate just before it (first use) and the dead temporaries to
    # hand back to the pool right after it (last use), so a long recording's temporaries
    # share a few buffers instead of all being allocated (and page-faulted) at once
    allocs: tuple = ()
    frees: tuple = ()
    # the scalars dividing integers (:func:`flamefuse.runtime.kernel.scalar_divisors`), worked
    # out at the plan's first run: a zero one raises the divide-by-zero flag at the flush
    divisors: list          # (a new list per plan where none is given)

    def __init__(self, steps, gone, cost, allocs=(), frees=(), divisors=None):
        _set(self, "steps", steps)
        _set(self, "gone", gone)
        _set(self, "cost", cost)
        _set(self, "allocs", allocs)
        _set(self, "frees", frees)
        _set(self, "divisors", [] if divisors is None else divisors)


def lifetimes(program: Program, steps, gone) -> tuple[tuple, tuple]:
    first, last = {}, {}
    for k, step in enumerate(steps):
        for a in step.args:
            if type(a) is Grid:
                first.setdefault(a.base, k)
                last[a.base] = k
    allocs, frees = [[] for _ in steps], [[] for _ in steps]
    for b, k in first.items():
        allocs[k].append(b)
        info = program.bases[b]
        if info.fresh and info.dead and b not in gone:
            frees[last[b]].append(b)
    return tuple(map(tuple, allocs)), tuple(map(tuple, frees))


def windows(program: Program, size: int) -> list[Program]:
    """``program`` cut into runs of ``size // 2`` to ``size`` consecutive ops, each a program over the
    same bases (a base is fresh in a run only if first accessed there, dead only if last
    accessed there). Partitions of the runs, in order, form a legal partition of the whole
    (a dependence between runs goes forward), and graph building and partitioning, quadratic
    and worse in the op count, stay fast on a long recording (a loop without a sync point)."""
    ops = program.ops
    if len(ops) <= size:
        return [program]
    first, last = {}, {}
    for i, op in enumerate(ops):
        for r in (op.out,) + op.refs_in():
            first.setdefault(r.base, i)
            last[r.base] = i
    # bases live across the cut after op i; cuts go where fewest cross (a loop's iteration
    # boundary, where only its carried arrays are live), so windows repeat the same structure
    delta = [0] * (len(ops) + 1)
    for k, f in first.items():
        delta[f] += 1
        delta[last[k]] -= 1
    crossing, running = [], 0
    for d in delta[:-1]:
        running += d
        crossing.append(running)
    out, lo = [], 0
    while lo < len(ops):
        hi = len(ops)
        if hi - lo > size:
            hi = 1 + min(range(lo + size // 2, lo + size), key=lambda i: (crossing[i], -i))
        out.append(Program(ops[lo:hi], tuple(
            BaseInfo(b.dtype, b.size, b.fresh and first.get(k, lo) >= lo, b.dead and last.get(k, hi) < hi)
            for k, b in enumerate(program.bases))))
        lo = hi
    return out


_WINDOW_PLANS: dict = {}


def canonical(part: Program) -> tuple[Program, tuple]:
    """``part`` with its bases renumbered by first use (outputs, then inputs, op by op) and
    only those kept, and the original number of each: windows that repeat a loop body
    (fresh temporaries each iteration) become equal, so their partition is computed once.
    Scalars are renumbered by first use too (each iteration's are new ones), and so are the
    offsets of the views of bases no op writes (``radii[s]``): only which of those views are
    equal enters the graph (no dependence or clash without a write), so xray's 14 windows
    are one partition, not 14."""
    numbers: dict = {}
    scalars: dict = {}
    written = {op.out.base for op in part.ops}
    offsets: dict = {}

    def ref(x):
        if type(x) is Ref:
            v = x.view
            if x.base not in written:
                v = View(offsets.setdefault((x.base, v), len(offsets)), v.shape, v.strides)
            return Ref(numbers.setdefault(x.base, len(numbers)), v)
        return Scalar(scalars.setdefault(x.index, len(scalars)), x.dtype) if type(x) is Scalar else x
    ops = tuple(Op(op.kind, op.name, ref(op.out), tuple(ref(x) for x in op.ins), op.shape, op.loop,
                   op.axis) for op in part.ops)
    order = tuple(numbers)
    return Program(ops, tuple(part.bases[b] for b in order)), order


def partition_window(part: Program, partitioner: str):
    """``[(block, contracted bases)]`` and the cost of ``part``'s partition (memoised by
    :func:`canonical` form)."""
    canon, order = canonical(part)
    key = (canon, partitioner)
    if key not in _WINDOW_PLANS:
        g = wsp.build(canon)
        blocks = partition(g, "greedy_from_linear" if partitioner == "greedy" and len(canon.ops) > SEEDED
                           else partitioner)
        _WINDOW_PLANS[key] = ([(blk, wsp.contracted(g, blk)) for blk in blocks], wsp.cost(g, blocks))
    blocks, cost = _WINDOW_PLANS[key]
    return [(blk, frozenset(order[b] for b in dead)) for blk, dead in blocks], cost


def build_plan(program: Program, partitioner: str) -> Plan:
    steps, gone, total = [], set(), 0
    for part in windows(program, WINDOW):
        t0 = time.perf_counter()
        blocks, cost = partition_window(part, partitioner)
        t1 = time.perf_counter()
        for blk, dead in blocks:
            gone |= dead
            k = generate(part, blk, dead)
            steps.append(Step(k.code, k.args))
        total += cost
        STATS["partition_s"] += t1 - t0
        STATS["compile_s"] += time.perf_counter() - t1
        STATS["blocks"] += len(blocks)
    allocs, frees = lifetimes(program, steps, gone)
    return Plan(tuple(steps), frozenset(gone), total, allocs, frees)


def _from_record(record) -> Plan:
    codes, steps, gone, cost, allocs, frees = record
    t0 = time.perf_counter()
    codes = [Code.of(c) for c in codes]
    steps = tuple(Step(codes[k], tuple(map(_arg, args))) for k, args in steps)
    STATS["compile_s"] += time.perf_counter() - t0
    return Plan(steps, gone, cost, allocs, frees)


def _record(plan: Plan) -> tuple:
    """The plan as plain values (see :mod:`.plan_cache`): each distinct kernel once, as its
    :meth:`Code.plain <flamefuse.runtime.code.Code.plain>` tuple (a loop body's steps repeat a
    few kernels, 2 KB each) and arguments as tuples of ints and strings,
    not dataclasses (an index's slot, a Ref with its View, is for generation only): a 2000-op
    plan unpickles several times faster."""
    codes = tuple(dict.fromkeys(s.code for s in plan.steps))
    number = {code: k for k, code in enumerate(codes)}
    steps = tuple((number[s.code], tuple(map(_plain, s.args))) for s in plan.steps)
    return (tuple(c.plain() for c in codes), steps, plan.gone, plan.cost, plan.allocs, plan.frees)


def _plain(a) -> tuple:
    if type(a) is Grid:
        return (0, a.base, a.shape)
    if type(a) is Index:
        return (1, a.value)
    return (2, a.index, a.dtype)


def _arg(t):
    return Grid(t[1], t[2]) if t[0] == 0 else Index((), t[1]) if t[0] == 1 else Scalar(t[1], t[2])


def plan_for(program: Program, partitioner: str) -> Plan:
    """The plan of ``program``: from memory, else from the disk plan cache
    (:mod:`flamefuse.runtime.plan_cache`), else built (and stored there)."""
    key = (program, partitioner)
    plan = _PLANS.get(key)
    if plan is not None:
        STATS["plan_hits"] += 1
        return plan
    t0 = time.perf_counter()
    record = plan_cache.load(program, partitioner)
    STATS["plan_cache_s"] += time.perf_counter() - t0
    if record is not None:
        STATS["plan_loads"] += 1
        plan = _from_record(record)
    else:
        STATS["plans_built"] += 1
        plan = build_plan(program, partitioner)
        t1 = time.perf_counter()
        if plan_cache.worth(program, partitioner):      # (never the time it took: plan_cache)
            plan_cache.store(program, partitioner, _record(plan))
        STATS["plan_cache_s"] += time.perf_counter() - t1
    _PLANS[key] = plan
    return plan


def _first_call(step, args) -> None:
    """A step's first call: its kernel for these argument types, the native library when one
    was built (:mod:`flamefuse.runtime.native`: ``native_loads``), else Numba's compile or disk
    cache load timed apart (``load_s``, ``loads``; the native library is then wanted), then
    the call (all in ``first_call_s``)."""
    t0 = time.perf_counter()
    sig = sigcodes.signature(args) if jit_enabled() else None
    fn = native.find(step.source, sig) if sig is not None else None
    if fn is not None:
        STATS["native_loads"] += 1
        if getattr(fn, "serial", fn) is not fn and teamcost.serial(step.code, args):
            fn = fn.serial                      # too small to pay for waking the thread team
            STATS["serial_launches"] += 1
    else:
        fn = compile_kernel(step.source)
        if hasattr(fn, "compile"):              # a Numba dispatcher (not FLAMEFUSE_JIT=0)
            from flamefuse.jit import numba
            fn.compile(tuple(numba().typeof(a) for a in args))
            STATS["load_s"] += time.perf_counter() - t0
            STATS["loads"] += 1
            native.want(step.code, sig)
    if sig is not None:
        preload.record(step.source, sig)
    fn(*args)
    STATS["first_call_s"] += time.perf_counter() - t0
    step.entry.append(fn)


def _signature(step, program: Program, buffers: list) -> tuple | None:
    """What :func:`flamefuse.sigcodes.signature` gives for the arguments :func:`run` makes for
    ``step``, before its buffers exist (a base allocated by ``run`` is a C-contiguous, writeable
    pool buffer)."""
    out = []
    for kind, x, y in step.binds:
        if kind < 2:
            buf, nd = buffers[x], 1 if kind == 0 else len(y)
            dt = np.dtype(program.bases[x].dtype) if buf is None else buf.dtype
            if dt.kind not in sigcodes.ARRAY_KINDS or (buf is not None and not (
                    buf.flags.c_contiguous and buf.flags.aligned)):
                return None
            out.append(sigcodes.code_of_array(dt, nd, buf is None or buf.flags.writeable))
        elif kind == 2:
            out.append("Q")
        else:
            code = sigcodes.SCALARS.get(y)
            if code is None:
                return None
            out.append(code)
    return tuple(out)


def _compiling(program: Program, plan: Plan, buffers: list) -> bool:
    """Background compiling (:mod:`flamefuse.runtime.compiler`): does a step of ``plan`` still
    wait for its kernel's native library? Every such kernel is wanted (a kernel with no native
    form compiles inline at its first call, as before)."""
    waiting = False
    for step in plan.steps:
        if step.entry:
            continue
        sig = _signature(step, program, buffers)
        if sig is not None and compiler.library(step.code, sig) is None:
            waiting = True
    return waiting


def run(program: Program, plan: Plan, buffers: list, scalars: list, recorded=None) -> None:
    """Run ``plan``'s kernels; while one of them is compiled in the background
    (:mod:`flamefuse.runtime.compiler`), the program's operations as NumPy's calls instead
    (:mod:`flamefuse.runtime.numpy_program`), their warnings given at the script's lines
    (``recorded``: the recorded ops the program's ops were numbered from, in order, whose
    ``site`` each op's warnings name; None: the line that made the flush run). The
    floating-point flags are cleared before the kernels and tested after each step
    (:mod:`flamefuse.runtime.fpflags`, while NumPy's error state warns of some category: about a
    microsecond a step; a later step's arguments, NumPy scalars, go through NumPy's casts, which
    clear them), Numba's threads' too around a Numba ``prange`` kernel
    (:mod:`flamefuse.runtime.numba_flags`); a flag raised gives NumPy's warnings
    (:func:`~flamefuse.runtime.numpy_program.warn_like_numpy`). A zero scalar dividing integers
    counts as the divide-by-zero flag (its kernels leave that flag to the flush:
    :data:`flamefuse.runtime.kernel.INT_DIVIDE_BY_SCALAR`)."""
    if plan.steps and not plan.steps[-1].entry and compiler.background() and native.enabled() and jit_enabled() \
            and _compiling(program, plan, buffers):
        compiler.STATS["deferred_flushes"] += 1
        compiler.STATS["deferred_ops"] += len(program.ops)
        warn_from_numpy(lambda mark: numpy_run(program, buffers, scalars, mark), recorded)
        return
    bases = program.bases
    watch = fpflags.watched()
    seen = 0
    if watch:
        fpflags.clear()
    for k, step in enumerate(plan.steps):
        for i in plan.allocs[k]:
            if buffers[i] is None:
                buffers[i] = pool.take(bases[i].size, bases[i].dtype)
        args = [buffers[x] if kind == 0 else buffers[x].reshape(y) if kind == 1 else x if kind == 2
                else fpflags.scalar_arg(y, scalars[x]) for kind, x, y in step.binds]
        if step.entry:
            step.entry[0](*args)
        else:
            _first_call(step, args)
        if watch:       # read now: NumPy clears the flags in a later step's scalar conversions
            seen |= fpflags.raised()
            if step.code.parallel and hasattr(step.entry[0], "compile"):
                seen |= numba_flags.bits()      # Numba's threads' (a prange kernel's chunks)
        del args
        for i in plan.frees[k]:
            pool.give(buffers[i])
            buffers[i] = None
    for i, info in enumerate(bases):          # bases no kernel touched (none in practice)
        if buffers[i] is None and i not in plan.gone and not (info.fresh and info.dead):
            buffers[i] = pool.take(info.size, info.dtype)
    if watch:
        if watch & 1 and not seen & 1:
            if not plan.divisors:
                plan.divisors.append(scalar_divisors(program))
            if any(scalars[i] == 0 for i in plan.divisors[0]):
                seen |= 1
        if seen & watch:
            warn_like_numpy(program, buffers, scalars, seen & watch, recorded)
