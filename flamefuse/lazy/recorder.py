"""The recorder: pending operations on base arrays, flushed as fused kernels at sync points.

A :class:`Base` is a flat buffer (``data``, allocated when first needed) with
a count of the lazy arrays that refer to it; ``live == 0`` at a flush means
its Python objects died (the array is freed, and contracted if it is a
temporary). ``RECORDER`` is the process-wide recorder: ``record`` appends an
operation (a :class:`~flamefuse.runtime.recorded.Recorded` named tuple, read by field name),
``flush`` splits the pending operations with :func:`stages` into
runs of elementwise ops and reductions -- each numbered into a
:class:`~flamefuse.runtime.program.Program`, planned (merge cache) and run --
and groups of matrix-vector/vector-matrix/outer products, each run as one
loop-nest kernel when two products read one matrix (:func:`flamefuse.runtime.linalg.run_group`;
the latest is ``RECORDER.last_loopnest``), else as NumPy's own calls
(:mod:`flamefuse.runtime.products`), and groups of recorded linear-algebra calls, each run by
:func:`flamefuse.synth.run.run_group`. Before a run is numbered, ops whose result nobody can
observe (a fresh, dead temporary no op reads) are dropped (:func:`unobserved_dropped`).
``STATS`` counts operations recorded, eager, flushes, fallbacks, external calls and
product groups/products (``loopnest_groups``, ``loopnest_products``; ``blas_products`` of them
ran as NumPy calls); ``FALLBACKS`` counts fallbacks by operation name.

Threads: a script's threads share ``RECORDER``. ``record`` and ``flush`` hold its re-entrant
``lock``, so one thread at a time appends or runs kernels (Numba's workqueue layer aborts the
process on two parallel launches at once, and a kernel module imported by two threads at once
was seen half-loaded). A flush keeps ``touched`` (the pending bases) as it was until its kernels
have run, so a thread that reads ``touched`` or :meth:`Recorder.concrete` without the lock never
takes a base that another thread's flush is still computing for a computed one: it sees it
pending and calls ``flush``, which waits for the lock.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections import Counter, defaultdict
from math import prod

import numpy as np

from flamefuse import switches
from flamefuse.runtime import adapt
from flamefuse.runtime import pool
from flamefuse.runtime.execute import plan_for, run
from flamefuse.runtime.filters import DEFERRED_ERRORS, needs_clustering, raise_deferred, run_segment
from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar, dtype_name
from flamefuse.runtime.recorded import Recorded
from flamefuse.runtime.sites import _INTERNAL
from flamefuse.lazy import pending_state

_new = tuple.__new__
_getframe = sys._getframe

STATS = defaultdict(int)    # not a Counter: its += costs three times a dict's, on every eager op
FALLBACKS = Counter()


class FallbackWarning(UserWarning):
    """An operation flamefuse.lazy does not fuse ran eagerly in NumPy."""


class Base:
    # exported: None, or weak references to NumPy arrays over ``data`` handed to code outside
    # flamefuse (``np.asarray(x)`` from NumPy, ``__array__``): while one lives, operations on
    # this base run at once (:meth:`Recorder.record`), as that code sees and writes the memory
    # finite: None, or the ``data`` array whose values are known to be finite (a Cholesky
    # factor: :func:`flamefuse.lazy.linalg.record`), so that a SciPy call's ``check_finite``
    # need not read them again; valid while ``data`` is that array and nothing wrote it:
    # a recorded op writing the base and every NumPy array handed out of it
    # (:meth:`flamefuse.lazy.array.LazyArray.numpy`) drop it
    __slots__ = ("dtype", "size", "data", "live", "exported", "tally", "finite", "__weakref__")

    def __init__(self, dtype, size: int, data=None):
        self.dtype, self.size, self.data, self.live, self.exported = dtype, size, data, 0, None
        self.finite = None
        # the creating line's :class:`~flamefuse.runtime.adapt.Tally` while flamefuse fuse learns
        self.tally = adapt.tally_here() if adapt.STATE.learning else None

    def __del__(self, _give=pool.give, _least=pool.MIN_BYTES):
        # (bound here: a base dying at interpreter shutdown, after this module's globals were
        # cleared, must not look ``pool`` up; ``give`` itself pools nothing after exit)
        if self.data is not None and self.size * self.dtype.itemsize >= _least:
            _give(self.data)


# a boolean selection's ops: a flush before one is appended would run the selection it belongs
# to without it (its group was checked valid by the caller); a state change waits for the flush
_SELECTING = frozenset({"select", "sew", "sreduce"})


class Recorder:
    def __init__(self):
        self.ops: list = []
        self.touched: dict[int, Base] = {}
        self.partitioner = switches.text("FLAMEFUSE_PARTITIONER")
        self.eager_below = switches.integer("FLAMEFUSE_EAGER_BELOW")
        self.max_ops = 2000
        self.last_loopnest = None
        self.lock = threading.RLock()
        self._running: list = []       # the op lists being run (a flush inside a flush: none yet)
        self.tallied: dict = {}     # learning: Tally -> [ops, elements] pending (adapt.charge_flush)
        self.state = None           # the error state and filters the pending ops were recorded under

    def concrete(self, base: Base) -> bool:
        return base.data is not None and id(base) not in self.touched

    def record(self, kind, name, out, ins, shape, loop, axis=None) -> None:
        """Append one op; ``out`` and array ``ins`` are ``(Base, View)``, scalars ``(value, dtype)``.
        An op on an exported base (``Base.exported``, a NumPy view of it still alive outside)
        runs at once."""
        with self.lock:
            if not self.ops:
                self.state = pending_state.now()
            elif kind not in _SELECTING and not pending_state.same(self.state):
                self.flush()        # (changed by a library: the pending ops first, under theirs)
                self.state = pending_state.now()
            exported, last = False, None
            if type(out[0]) is Base:
                out[0].finite = None        # written: nothing known about its values any more
            for x in (out,) + tuple(ins):
                if isinstance(x[0], Base):
                    self.touched[id(x[0])] = x[0]
                    if x[0].exported is not None:
                        exported = exported or _still_exported(x[0])
                    t = x[0].tally
                    if t is None or t is last:
                        continue
                    last = t                    # learning: this op once for its site
                    if kind in adapt.UNJUDGED:      # products, linear-algebra calls: not judged;
                        if prod(shape) >= adapt.LARGE:  # large ones keep their lines fused
                            t.unjudged += 1
                    elif kind in adapt.KINDS:
                        counts = self.tallied.get(t) or self.tallied.setdefault(t, [0, 0, 0.0])
                        n = prod(shape)
                        counts[0] += 1
                        counts[1] += n
                        counts[2] += n * adapt.per_element(kind, name, loop, n)
            frame = _getframe(1)            # the script's line (sites.here, inline: 0.1 us)
            while frame.f_code.co_filename.startswith(_INTERNAL):
                frame = frame.f_back
                if frame is None:
                    break
            site = None if frame is None else (frame.f_code, frame.f_lasti, frame.f_globals)
            del frame
            self.ops.append(_new(Recorded, (kind, name, out, tuple(ins), shape, loop, axis, site)))
            STATS["recorded"] += 1
            if exported:
                self.flush()
            elif len(self.ops) >= self.max_ops:
                self.flush(aligned_cut(self.ops, self.max_ops // 2))

    def flush(self, cut: int | None = None) -> None:
        """Run the pending ops; with ``cut``, only the first ``cut`` of them (the others stay
        pending, their bases kept alive for them): the pending-op limit's flush ends where
        the recording's structure repeats (:func:`aligned_cut`)."""
        if not self.ops and not self._running:     # (a flush in another thread: wait for it)
            return
        with self.lock:
            if not self.ops:        # another thread's flush ran them while this one waited
                return
            if cut is None or not 0 < cut < len(self.ops):
                cut = len(self.ops)
            ops = self.ops[:cut]
            self._running.append(ops)               # before ops is emptied: see above
            self.ops = self.ops[cut:]
            try:
                with pending_state.recorded_under(self.state):
                    self._run(ops, self.ops)
            finally:                # pending now: what was recorded since, and what still runs
                self._running.pop()
                self.touched = {id(b): b for run in (self.ops, *self._running) for op in run
                                for b in written(op) + tuple(x[0] for x in op.ins)
                                if isinstance(b, Base)}

    def _run(self, ops: list, pending: list = ()) -> None:
        t0 = time.perf_counter()
        tallied, self.tallied = self.tallied, {}
        mark, fused_s = adapt.cold_mark() if tallied else None, 0.0
        groups = stages(ops)
        last = last_groups(groups)
        if pending:             # ops left pending by a cut flush: what they touch is used later
            last.update(last_groups([pending], len(groups)))
        for k, group in enumerate(groups):
            if group[0].kind == "product":
                self.last_loopnest = _run_products(group)
                STATS["loopnest_groups"] += 1
                STATS["loopnest_products"] += len(group)
            elif group[0].kind == "linalg":
                from flamefuse.synth.run import run_group
                run_group(group, Later(last, k))
                STATS["linalg_groups"] += 1
                STATS["linalg_calls"] += len(group)
            else:
                t1 = time.perf_counter()
                _run_fused(group, self.partitioner, Later(last, k))
                fused_s += time.perf_counter() - t1
        STATS["flushes"] += 1
        STATS["flush_s"] += time.perf_counter() - t0
        if tallied:     # a flush that compiled or loaded a kernel is charged what it would cost warm
            adapt.charge_flush(tallied, adapt.warm_seconds(mark, fused_s))
        if DEFERRED_ERRORS:
            raise_deferred()


def _still_exported(base: Base) -> bool:
    """Does a NumPy view handed out of ``base`` still live? (forgets the dead ones)"""
    refs = [r for r in base.exported if r() is not None]
    base.exported = refs or None
    return bool(refs)


def last_groups(groups: list, start: int = 0) -> dict:
    """``{id(base): index of the last group that writes or reads it}`` (groups numbered from
    ``start``)."""
    return {id(x[0]): k for k, g in enumerate(groups, start) for op in g for x in (op.out,) + op.ins}


ALIGN_WINDOW = 16       # ops compared to tell where a recording's structure repeats


def _shape_of(op) -> tuple:
    """What an op's program entry is made of, but its operands' identities and scalar values."""
    return (op.kind, op.name, op.shape, op.loop, op.axis, op.out[1], tuple(x[1] for x in op.ins))


def aligned_cut(ops: list, least: int) -> int | None:
    """Where the pending-op limit's flush of ``ops`` ends: the last op from ``least`` on at which
    the first :data:`ALIGN_WINDOW` ops' structure (:func:`_shape_of`) starts again, or None (all
    of them). A loop without a sync point (a stencil's time steps, a Monte Carlo sweep) then
    flushes a whole number of its bodies each time, from the same place in the body: the
    flushes are equal programs, planned once and their kernels' first calls made once
    (:func:`flamefuse.runtime.execute.plan_for`), where a flush of exactly the limit started
    each time elsewhere in the body (cavity_flow: 11 plans read from the disk cache, 7586 first
    calls in 13 flushes). Running the ops before the cut first is what a sync point there
    would do."""
    w = min(ALIGN_WINDOW, len(ops) // 4)
    if w < 1:
        return None
    head = [_shape_of(op) for op in ops[:w]]
    first = head[0]
    try:
        for c in range(len(ops) - w, max(least, w) - 1, -1):
            if _shape_of(ops[c]) == first and all(_shape_of(ops[c + i]) == head[i] for i in range(1, w)):
                return c
    except TypeError:       # (an operand whose comparison is not defined: no cut)
        return None
    return None


class Later:
    """The ids of the bases that a group after group ``k`` of a flush touches, as a set for
    ``in``, iteration and ``|``: one dict of last uses for the flush instead of one set per
    group, which made a flush quadratic (a 300-step loop has 600 groups: 0.13 s of sets for
    markov). A clustered stage cut into pieces uses it too (:func:`_run_fused`)."""
    __slots__ = ("last", "k")

    def __init__(self, last: dict, k: int):
        self.last, self.k = last, k

    def __contains__(self, key) -> bool:
        return self.last.get(key, -1) > self.k

    def __iter__(self):
        return (i for i, k in self.last.items() if k > self.k)

    def __or__(self, other) -> set:
        return set(self) | set(other)


def _bases(ops, numbers: dict, bases: list):
    def ref(x, scalars):
        if isinstance(x[0], Base):
            if id(x[0]) not in numbers:
                numbers[id(x[0])] = len(bases)
                bases.append(x[0])
            return Ref(numbers[id(x[0])], x[1])
        scalars.append(x[0])
        return Scalar(len(scalars) - 1, x[1])
    return ref


SEGMENT_MAX = 48    # ops in one clustered segment at most: a stage of 100 masks and their means
# (a histogram by bins, azimint) was one loop whose Numba compile took minutes; pieces of one
# structure share one plan and one kernel


def _pieces(group: list) -> list[list]:
    """A clustered stage cut into pieces of about SEGMENT_MAX ops, in order, never between a
    selection (or an op over selections: their length is known only inside the segment that
    computes them) and the last op that reads it."""
    last_read = {}
    for i, op in enumerate(group):
        for x in op.ins:
            last_read[id(x[0])] = i
    pieces, start, open_until = [], 0, -1
    for i, op in enumerate(group):
        if op.kind in ("select", "sew"):
            open_until = max(open_until, last_read.get(id(op.out[0]), i))
        if i + 1 - start >= SEGMENT_MAX and i >= open_until:
            pieces.append(group[start:i + 1])
            start = i + 1
    if start < len(group):
        pieces.append(group[start:])
    return pieces


def _run_fused(group, partitioner: str, later: set) -> None:
    """Elementwise ops and reductions: one runtime Program, partitioned and run as fused kernels
    (stages with selections, or all with partitioner "cluster": :mod:`flamefuse.runtime.filters`)."""
    group = unobserved_dropped(group, later)
    if not group:
        return
    if needs_clustering(group, partitioner):
        pieces = _pieces(group)
        if len(pieces) == 1:
            return run_segment(group, partitioner, later, _run_fused)
        last = last_groups(pieces)
        for k, piece in enumerate(pieces):     # in order; what a later piece touches is kept
            run_segment(piece, partitioner, Later(last, k) | later, _run_fused)
        return
    numbers, bases, scalars, ops = {}, [], [], []
    ref = _bases(group, numbers, bases)
    for op in group:
        ins = tuple(ref(x, scalars) for x in op.ins)
        ops.append(Op(op.kind, op.name, ref(op.out, scalars), ins, op.shape, op.loop, op.axis))
    program = Program(tuple(ops), tuple(
        BaseInfo(dtype_name(b.dtype), b.size, b.data is None, b.live == 0 and id(b) not in later)
        for b in bases))
    plan = plan_for(program, partitioner)
    buffers = [b.data for b in bases]
    run(program, plan, buffers, scalars, group)     # (group: the ops' lines, for warnings)
    for b, buf in zip(bases, buffers):
        b.data = buf


def unobserved_dropped(group, later: set) -> list:
    """``group`` without the elementwise ops and reductions whose result nobody can observe:
    written into a fresh base (no data yet) that no lazy array refers to any more, that no
    later group uses and that no op of ``group`` reads (repeated until none is left; e.g. the
    inner copy of ``np.roll(np.roll(x, 1, 0), 1, 1)``, which the outer roll reads through)."""
    while True:
        read = {id(x[0]) for op in group for x in op.ins if isinstance(x[0], Base)}
        keep = [op for op in group if not _unobserved(op, read, later)]
        if len(keep) == len(group):
            return group
        group = keep


def _unobserved(op, read: set, later: set) -> bool:
    b = op.out[0]
    return (op.kind in ("ew", "reduce") and isinstance(b, Base) and b.data is None and b.live == 0
            and id(b) not in read and id(b) not in later)


def _run_products(group):
    """Matrix-vector, vector-matrix and outer products: one fused loop-nest kernel (returned)
    when two of them read the same matrix, else NumPy's call for each (None; see
    :mod:`flamefuse.runtime.products`)."""
    from flamefuse.runtime.products import Product, run_blas, shares_a_matrix
    numbers, bases = {}, []
    ref = _bases(group, numbers, bases)
    products = tuple(Product(op.name, ref(op.out, None), tuple(ref(x, None) for x in op.ins), op.loop[-1])
                     for op in group)
    buffers = [np.empty(b.size, b.dtype) if b.data is None else b.data for b in bases]
    kernel = None
    if shares_a_matrix(products):
        from flamefuse.runtime.linalg import run_group    # loop nests only when needed
        kernel = run_group(products, buffers, group)
    else:
        run_blas(products, buffers, group)      # (group: the products' lines, for warnings)
        STATS["blas_products"] += len(products)
    for b, buf in zip(bases, buffers):
        b.data = buf
    return kernel


def stages(ops: list) -> list[list]:
    """Split recorded ops into runs for the runtime and groups of products for one loop nest.

    A product joins the latest product group when no op recorded since that
    group writes a base the product reads (its output is always a fresh base,
    so moving it earlier is sound) and it reads the group's results only whole
    (or transposed); otherwise it starts a new group.
    """
    out: list[list] = []
    last = lin = None
    for op in ops:
        if op.kind == "linalg":       # recorded linear-algebra calls: one group while nothing since writes their inputs
            if lin is not None and _joins_linalg(op, out[lin + 1:]):
                out[lin].append(op)
            else:
                lin = len(out)
                out.append([op])
        elif op.kind != "product":
            if out and out[-1][0].kind not in ("product", "linalg"):
                out[-1].append(op)
            else:
                out.append([op])
        elif last is not None and _joins(out[last], op, out[last + 1:]):
            out[last].append(op)
        else:
            last = len(out)
            out.append([op])
    return out


def _joins(group: list, op, since: list) -> bool:
    reads = {id(x[0]) for x in op.ins}
    if any(id(o.out[0]) in reads for g in since for o in g):
        return False
    made = {id(o.out[0]): o.out[1] for o in group}
    return all(id(b) not in made or v in (made[id(b)], _flip(made[id(b)])) for b, v in op.ins)


def _joins_linalg(op, since: list) -> bool:
    reads = {id(x[0]) for x in op.ins}
    return not any(id(b) in reads for g in since for o in g for b in written(o))


def written(op) -> tuple:
    """The bases a recorded op writes (a linear-algebra call's extra outputs too)."""
    return (op.out[0],) + (tuple(x[0] for x in op.name.extra) if op.kind == "linalg" else ())


def _flip(v):
    return type(v)(v.offset, v.shape[::-1], v.strides[::-1])


RECORDER = Recorder()
if hasattr(os, "register_at_fork"):   # a fork waits for another thread's flush: a free lock
    os.register_at_fork(before=RECORDER.lock.acquire, after_in_parent=RECORDER.lock.release,
                        after_in_child=RECORDER.lock.release)



def _first_user(frame) -> tuple:
    """``(frame, steps)``: the first of ``frame`` and its callers outside flamefuse and NumPy (None
    when there is none), and how many callers up it is."""
    steps = 0
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame, steps = frame.f_back, steps + 1
    return frame, steps


def user_frame():
    """The innermost frame outside flamefuse and NumPy: the user's line (None when there is none)."""
    return _first_user(sys._getframe(1))[0]


def user_stacklevel() -> int:
    """The ``stacklevel`` of the innermost frame outside flamefuse and NumPy, for a warning
    issued by the function that calls this one (it points at the user's line)."""
    return 1 + _first_user(sys._getframe(1))[1]


# Does a fallback warn (a :class:`FallbackWarning` through :mod:`warnings`)? ``flamefuse fuse``
# turns it off (``configure(fallback_warnings=False)``): a script run as NumPy must see NumPy's
# warnings only -- its ``catch_warnings(record=True)`` lists, ``-W error`` or
# ``simplefilter("error")`` -- and the run's summary names the fallbacks instead.
WARN_FALLBACKS = [True]


def note_fallback(name: str) -> None:
    FALLBACKS[name] += 1
    STATS["fallbacks"] += 1
    if WARN_FALLBACKS[0]:
        warnings.warn(f"flamefuse.lazy: {name} is not fused; it ran eagerly in NumPy",
                      FallbackWarning, stacklevel=user_stacklevel())
