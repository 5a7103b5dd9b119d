"""Plans kept on disk between processes: a warm run skips partitioning and code generation.

A recorded program's plan (:class:`flamefuse.runtime.execute.Plan`: its kernels'
sources and argument lists, the contracted bases, the buffers' first and last
uses) depends only on the program and the partitioner, so, like Bohrium's fuse
cache, it is kept under ``<cache>/plans/<digest>.plan`` (the cache folder of
:mod:`flamefuse.cache`). ``load(program, partitioner)`` returns the stored record or
None; ``store(program, partitioner, record)`` writes it atomically. A record is
``(codes, steps, gone, cost, allocs, frees)``: plain values that pickle (each distinct kernel
once, as its :meth:`Code.plain <flamefuse.runtime.code.Code.plain>` tuple, a step its kernel's
number and arguments as tuples: ``execute._record``). A product group's loop-nest code is kept
the same way (:func:`flamefuse.runtime.linalg.kernel_of`: the record a ``NestCode.plain()``).

The plan is a store entry (:mod:`flamefuse.store`: read only from the user's own private file,
stamped with flamefuse's version and the source of the modules that decide plans, the kind
``plans`` of :data:`flamefuse.cache_store.TABLE`, so a changed partitioner, graph rule or
kernel generator never reads an old plan; an entry of another stamp or key, damaged or foreign,
is a miss and is overwritten). Its key is the program's identity (:func:`text`: its ``repr``
with the partitioner; the file's name is a digest of it, :func:`key`, and the header holds the
SHA-256 of the whole text, so a collision reads nothing). A recorded
:class:`~flamefuse.runtime.program.Program` is identified by the SHA-256 of a flat encoding of
its fields (:func:`_encoded`: nested tuples of its strings and integers, ``marshal``'s
format 2, which writes every value in full and so is the same bytes for equal programs in every
process); its ``repr`` took 14-22 ms for a 1000-operation program at every warm start, the
encoding 2. Anything else (a product group's program) keeps its ``repr``. The payload is the record, pickled,
and read by an unpickler that refuses every global (:class:`_PlainUnpickler`), so it can only
build tuples, lists, dicts, strings, numbers, booleans and None, never call a function.
``FLAMEFUSE_PLAN_CACHE=0`` (:mod:`flamefuse.switches`) turns the disk cache off (plans stay
cached in memory).
Only the plans of programs of at least ``WORTH_OPS`` operations are stored (:func:`worth`; a
smaller one is planned about as fast as its file is read: 0.3 ms for one operation against
0.2-0.5 ms, 1.2 ms for twelve), which also keeps the folder small; those of the searching
partitioners (``optimal``, ``cpsat``) always. The rule is the program's, never a clock's: the
time a plan took to build was the rule, and under load a warm run's quick plan crossed it and
was written (a warm run writes nothing: docs/startup.md), once, by whichever run was slowed.
"""
from __future__ import annotations

import io
import marshal
import pickle

from flamefuse import store as disk
from flamefuse.digest import sha256

WORTH_OPS = 8       # a recorded program's plan is stored from this many operations on (worth)
SEARCHED = frozenset({"optimal", "cpsat"})    # partitioners whose plans are always worth storing
FORMAT = 1          # of :func:`_encoded` (part of every recorded program's key)


def text(program, partitioner: str) -> str:
    """The program's identity: ``plan-<SHA-256 of its encoding>`` for a recorded program
    (:func:`_encoded`), else its ``repr`` (frozen dataclasses of ints, tuples and strings:
    deterministic, and ten times faster to make than a pickle), with the partitioner."""
    data = _encoded(program, partitioner)
    if data is not None:
        return "plan-" + sha256(data).hexdigest()
    return f"{partitioner}|{program!r}"


def _encoded(program, partitioner: str) -> bytes | None:
    """A recorded program's fields as nested tuples of strings, integers, booleans and None,
    in ``marshal``'s format 2 (no shared references: equal values, equal bytes; each value
    written with its type, so different values never give the same bytes); None when
    ``program`` is not a :class:`~flamefuse.runtime.program.Program` of :class:`Ref` and
    :class:`Scalar` operands, or holds a value ``marshal`` does not write."""
    from flamefuse.runtime.program import Program, Ref, Scalar
    if type(program) is not Program:
        return None
    ops = []
    try:
        for op in program.ops:
            ins = []
            for a in op.ins:
                if type(a) is Ref:
                    v = a.view
                    ins.append((0, a.base, v.offset, v.shape, v.strides, v.wrap))
                elif type(a) is Scalar:
                    ins.append((1, a.index, a.dtype))
                else:
                    return None
            v = op.out.view
            ops.append((op.kind, op.name, op.out.base, v.offset, v.shape, v.strides, v.wrap,
                        tuple(ins), op.shape, op.loop, op.axis))
        bases = tuple((b.dtype, b.size, b.fresh, b.dead) for b in program.bases)
        return marshal.dumps((FORMAT, partitioner, tuple(ops), bases), 2)
    except (ValueError, AttributeError, TypeError):     # a value marshal does not write
        return None


def worth(program, partitioner: str) -> bool:
    """Whether ``program``'s plan is stored (see the module doc): a function of the program and
    the partitioner only, so a plan is stored by the first run that builds it or by none."""
    ops = getattr(program, "ops", None)
    return ops is None or len(ops) >= WORTH_OPS or partitioner in SEARCHED


def key(identity: str) -> str:
    """The entry's file name for the identity ``identity``."""
    return disk.name(identity)


def load(program, partitioner: str):
    """The stored record of ``program``'s plan, or None."""
    data = disk.get("plans", text(program, partitioner), ".plan")
    if data is None:
        return None
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except (EOFError, pickle.UnpicklingError, ValueError, TypeError, IndexError, MemoryError):
        return None


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler that builds plain values only: every global (class or function) is refused,
    so nothing can be called while reading."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"a plan file names {module}.{name}: refused")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("a plan file holds a persistent id: refused")


def store(program, partitioner: str, record) -> None:
    """Write ``record`` (see the module doc) for ``program``; a failed write is ignored."""
    if not disk.enabled("plans"):
        return
    try:
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        _PlainUnpickler(io.BytesIO(data)).load()        # plain values only
    except (pickle.PicklingError, pickle.UnpicklingError, TypeError, AttributeError):
        return
    disk.put("plans", text(program, partitioner), data, ".plan")
