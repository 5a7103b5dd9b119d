"""Linear-algebra chains whose kernels are synthesized and compiled in the background.

With ``FLAMEFUSE_COMPILE=background`` (:mod:`flamefuse.runtime.compiler`) a closed chain of a
group (:func:`flamefuse.synth.group.run_segment`) runs its pieces' fused kernels only when every
answer its cut search needs is at hand: :func:`ready` walks the same search (longest connected
prefix first) asking :func:`answer` of each candidate chain, which never searches, derives or
compiles: a chain is *known* when this process has its answer compiled for these argument
types, when the cache says it does not fuse (the ``.none`` entry), or when the cache holds its
module and a ``.ready`` mark that a kernel of it was compiled into Numba's cache for these
types (:func:`types_of`: dtype, rank, layout, writability of each buffer, as Numba types the
call). When some answer is missing, the chain runs as its LAPACK calls
(:func:`flamefuse.synth.eager.run_steps`; only a chain of the operations that path has:
``chol``, ``trinv``, ``ltl``, ``trsm``, ``trsm_lt``, without finishing steps) and
:func:`job_item` describes the segment for the worker (plain values: buffers with their types
and shapes, steps, the cuts); the worker (:func:`build_chain`) rebuilds the segment on small
arrays of the same types, runs the same search with :func:`flamefuse.synth.kernels.fused`
(search, derivation, emission into the cache), calls each fused kernel once (Numba compiles it
into its disk cache) and writes the ``.ready`` mark.
"""
from __future__ import annotations

import hashlib
import os
import time

import numpy as np

from flamefuse.synth.chain import Buffer, Step

EAGER_OPS = frozenset({"chol", "trinv", "ltl", "trsm", "trsm_lt"})
SMALL = 8                   # the worker's arrays: each extent at most this (types, not sizes, matter)
_RAN: set = set()           # (module name, types) compiled in this process
_ASKED: dict = {}           # (chain, types) -> when its answer may be looked for again


def types_of(arrays) -> str:
    """The argument types of a kernel call, as Numba types them (C before F for an array that is
    both)."""
    return ",".join(f"{a.dtype.str}:{a.ndim}{'C' if a.flags.c_contiguous else 'F' if a.flags.f_contiguous else 'A'}"
                    f"{'w' if a.flags.writeable else 'r'}" for a in arrays)


def _mark(name: str, types: str) -> str:
    return name + "-" + hashlib.sha256(types.encode()).hexdigest()[:12]


def answer(chain, arrays):
    """``"fused"`` or ``"not"`` when the answer for ``chain`` (with these argument arrays) is at
    hand without searching or compiling, else None (looked for on disk at most every
    :data:`flamefuse.runtime.compiler.CHECK_S` per chain)."""
    from flamefuse.store import get
    from flamefuse.synth.chain import key
    from flamefuse.synth.kernels import _MEMO, Fused, _cached_text, stamp
    from flamefuse.runtime.compiler import CHECK_S
    types = types_of(arrays)
    memo = _MEMO.get(chain)
    if memo is not None and not isinstance(memo, Fused):
        return "not"
    name = key(chain.used(), stamp())
    if memo is not None and (name, types) in _RAN:
        return "fused"
    now = time.monotonic()
    if _ASKED.get((chain, types), 0.0) > now:
        return None
    reason = _cached_text(name, ".none")
    if reason is not None and reason.strip():
        return "not"
    if get("synth", _mark(name, types), ".ready") is not None and _cached_text(name) is not None:
        return "fused"
    _ASKED[(chain, types)] = now + CHECK_S
    return None


def ran(chain, arrays) -> None:
    """A fused kernel of ``chain`` ran here for these arrays: later calls need not ask the disk,
    and the ``.ready`` mark is written for later processes (a run that compiled inline)."""
    from flamefuse.store import get, put
    from flamefuse.synth.chain import key
    from flamefuse.synth.kernels import stamp
    types = types_of(arrays)
    name = key(chain.used(), stamp())
    if (name, types) not in _RAN:
        _RAN.add((name, types))
        if get("synth", _mark(name, types), ".ready") is None:
            put("synth", _mark(name, types), b"", ".ready")


def walk(seg, calls, lapack_alone, visit) -> bool:
    """The cut search's order (:func:`flamefuse.synth.group.run_segment`) over ``calls`` (units
    of ``seg``): from each first call, the longest connected run first; a lone call that runs as
    LAPACK calls alone ends the shortening. ``visit(chain)`` says True (the chain is taken: go on
    after it), False (try a shorter run) or None (stop here: ``walk`` gives False)."""
    from flamefuse.synth.segment import _chain, worth_fusing
    k = 0
    while k < len(calls):
        for j in range(len(calls), k, -1):
            if not worth_fusing(seg, calls[k:j]):
                continue
            if j == k + 1 and lapack_alone(seg, calls[k:j]) is not None:
                break
            taken = visit(_chain(seg, calls[k:j]))
            if taken is None:
                return False
            if taken:
                break
        k = j
    return True


def ready(seg, calls, lapack_alone) -> bool:
    """Is every answer the cut search of ``calls`` (units of ``seg``) needs at hand?
    (``lapack_alone``: :func:`flamefuse.synth.group.lapack_alone`.)"""
    def visit(chain):
        got = answer(chain, [seg.buffers[b.name] for b in chain.buffers])
        return None if got is None else got == "fused"

    return walk(seg, calls, lapack_alone, visit)


def deferred(g, i: int, call, vals, buffers: dict, steps: list, finish: list, lapack_alone) -> bool:
    """A call whose chain starts and ends with it (a general inverse or solve: LU, then its
    finishing step) when its kernel is not at hand: NumPy's own call now (``Group.eager``) and
    the chain wanted; False (nothing done) when the kernel is at hand or nothing compiles in the
    background. ``buffers``: ``{letter: (kind, structure, an array of the buffer's type)}``
    named as the group's new chain names them; ``lapack_alone``:
    :func:`flamefuse.synth.group.lapack_alone`."""
    from flamefuse.runtime import compiler
    if not compiler.background():
        return False
    from flamefuse.synth.segment import Segment, _units
    seg = Segment()
    for name, (kind, structure, arr) in buffers.items():
        seg.specs[name] = Buffer(name, kind, structure)
        seg.buffers[name] = arr
    seg.steps = [Step(op, tuple(binds)) for op, binds in steps]
    seg.calls = [(call, 0, len(steps), tuple(finish))]
    calls = _units(seg.calls)
    if ready(seg, calls, lapack_alone):
        return False
    compiler.want_chain(job_item(seg, calls))
    compiler.STATS["deferred_chains"] += 1
    g.eager(i, call, vals)
    return True


def eager_possible(seg, calls) -> bool:
    """Can ``calls`` run as LAPACK calls alone (:func:`flamefuse.synth.eager.run_steps`)?"""
    return all(not finish for _, _, _, finish in calls) and all(s.op in EAGER_OPS for s in seg.steps)


def job_item(seg, calls) -> dict:
    """The segment as plain values for the worker (:func:`build_chain`)."""
    buffers = []
    for name, spec in seg.specs.items():
        a = seg.buffers[name]
        buffers.append([name, spec.kind, spec.structure, a.dtype.str, list(a.shape), types_of([a])])
    steps = [[s.op, [list(b) for b in s.binds]] for s in seg.steps]
    cuts = [[first, count, [[kind, list(names)] for kind, names in finish]] for _, first, count, finish in calls]
    return {"buffers": buffers, "steps": steps, "calls": cuts,
            "piv": seg.piv is not None}


def _sample(dtype: str, shape: list, types: str) -> np.ndarray:
    """A small array of the type ``types`` describes (identity where square: a Cholesky of it
    succeeds)."""
    shape = tuple(min(int(n), SMALL) for n in shape)
    layout = types.split(":")[1][1]
    if len(shape) == 2 and shape[0] == shape[1]:
        a = np.eye(shape[0], dtype=np.dtype(dtype))
    else:
        a = np.zeros(shape, np.dtype(dtype))
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "A":
        wide = np.zeros(shape[:-1] + (2 * shape[-1],), a.dtype)
        wide[..., ::2] = a
        a = wide[..., ::2]
    if types.endswith("r"):
        a.setflags(write=False)
    return a


def build_chain(item: dict, lock, lapack_alone) -> None:
    """The worker's side: the same cut search as :func:`flamefuse.synth.group.run_segment`, each
    answer made (and kept in the cache) by :func:`flamefuse.synth.kernels.fused`, each fused
    kernel called once on small arrays of the segment's types (compiled into Numba's cache),
    then marked ready."""
    from flamefuse.store import put
    from flamefuse.synth.chain import key
    from flamefuse.synth.kernels import Fused, fused, stamp
    from flamefuse.synth.segment import Segment
    seg = Segment()
    for name, kind, structure, dtype, shape, types in item["buffers"]:
        seg.specs[name] = Buffer(name, kind, structure)
        seg.buffers[name] = _sample(dtype, shape, types)
    seg.steps = [Step(op, tuple(tuple(b) for b in binds)) for op, binds in item["steps"]]
    calls = [(None, int(first), int(count), tuple((kind, tuple(names)) for kind, names in finish))
             for first, count, finish in item["calls"]]
    _warm_helpers({a.dtype for a in seg.buffers.values() if a.ndim == 2})

    def visit(chain):
        arrays = [seg.buffers[b.name] for b in chain.buffers]
        name = key(chain.used(), stamp())
        fd = lock("synth-" + name)
        if fd is None:
            return None                 # another worker is on this segment
        try:
            f = fused(chain)
            if isinstance(f, Fused):
                kwargs = {}
                if any(s.op == "lu" for s in chain.steps):
                    kwargs["piv"] = np.empty(arrays[0].shape[0], np.int32)
                try:
                    f.kernel(*arrays, **kwargs)
                except Exception:      # noqa: BLE001 -- compiled all the same, or the script will
                    pass
                put("synth", _mark(name, types_of(arrays)), b"", ".ready")
        finally:
            os.close(fd)
        return isinstance(f, Fused)

    walk(seg, calls, lapack_alone, visit)


def _warm_helpers(dtypes) -> None:
    """Compile the chains' Numba helpers (the triangle fills and copies, the structure checks) for
    ``dtypes`` into Numba's disk cache, so a later process that has Numba loads them instead of
    compiling them in the script (their NumPy forms serve a process without Numba)."""
    from flamefuse.synth import fill, structure
    for dt in dtypes:
        f = np.eye(4, dtype=dt, order="F")
        c = np.eye(4, dtype=dt)
        for call in (lambda: fill._fill_upper(f, True), lambda: fill._fill_upper(f, False),
                     lambda: fill._copy_lower(f, c), lambda: fill._copy_lower(f, f),
                     lambda: fill._copy_finite(f, c), lambda: fill._copy_finite(f, f),
                     lambda: structure._is_lower(c), lambda: structure._is_lower(f),
                     lambda: structure._is_symmetric(c), lambda: structure._is_symmetric(f)):
            try:
                call()
            except Exception:      # noqa: BLE001 -- compiled in the script when needed, as before
                pass
