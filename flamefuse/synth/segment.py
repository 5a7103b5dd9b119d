"""The open chain of a group: buffers, library steps, the calls they came from, and its cuts.

A piece of the chain runs as one kernel only when its data flow is connected
(:func:`connected`): every call after the first shares a buffer with the calls
before it, and the row interchanges of a pivoted LU reach only the triangular
solves that use that LU's factor (a fused kernel applies them to every
row-partitioned operand)."""
from __future__ import annotations

from dataclasses import dataclass, field

from flamefuse.synth.chain import Chain


@dataclass(eq=False)
class Segment:
    buffers: dict = field(default_factory=dict)      # name -> ndarray
    specs: dict = field(default_factory=dict)        # name -> Buffer
    steps: list = field(default_factory=list)
    calls: list = field(default_factory=list)        # (Call, first step, step count, finish)
    written: set = field(default_factory=set)
    piv: object = None
    note: str = ""


def _units(calls) -> list:
    """The pieces a chain may be cut into: single steps, except a call with a finishing step or a
    pivoted LU (its steps share the row interchanges) stays whole."""
    out = []
    for call, first, count, finish in calls:
        if finish or count == 1:
            out.append((call, first, count, finish))
        else:
            out += [(call, first + k, 1, ()) for k in range(count)]
    return out


def _chain(seg: Segment, calls) -> Chain:
    steps = tuple(s for c, first, count, _ in calls for s in seg.steps[first:first + count])
    finish = tuple(f for c in calls for f in c[3])
    return Chain(tuple(seg.specs.values()), steps, finish).used()


def _bound(seg: Segment, unit) -> set:
    _, first, count, finish = unit
    names = {b for s in seg.steps[first:first + count] for _, b in s.binds}
    return names | {b for _, bs in finish for b in bs}


def connected(seg: Segment, units) -> bool:
    """May ``units`` (consecutive pieces of ``seg``) run as one kernel (see the module doc)?"""
    if len(units) < 2:
        return True
    seen = _bound(seg, units[0])
    for unit in units[1:]:
        names = _bound(seg, unit)
        if not names & seen:
            return False
        seen |= names
    lus = [dict(s.binds)["A"] for c in units for s in seg.steps[c[1]:c[1] + c[2]] if s.op == "lu"]
    if not lus:
        return True
    for _, first, count, _ in units:
        steps = seg.steps[first:first + count]
        if any(s.op == "lu" for s in steps):
            continue
        if not all(s.op == "trsm_unit" and dict(s.binds)["L"] in lus for s in steps):
            return False
    return True


def _vector_solves_only(seg: Segment, units) -> bool:
    """Is ``units`` (more than one) a factorization that LAPACK runs alone (a ``chol``: potrf)
    followed by triangular solves of a vector only? Fusing a trsv into the factorization saves
    one pass over a factor that is still in cache and costs the synthesized Cholesky's time
    against potrf's: ``np.linalg.solve`` of the normal equations' X^T X (chol -> trsm of one
    right-hand side) ran as the fused kernel in 1.6 ms at n = 500 where potrf and trtrs take
    1.1 ms. Each unit then runs as its LAPACK routine (:func:`flamefuse.synth.group.lapack_alone`)."""
    if len(units) < 2:
        return False
    for u in units:
        if u[2] != 1 or u[3]:
            return False
        step = seg.steps[u[1]]
        if step.op in ("trsm", "trsm_lt"):
            if seg.specs[dict(step.binds)["B"]].kind != "vector":
                return False
        elif step.op != "chol" or u is not units[0]:
            return False
    return True


def worth_fusing(seg: Segment, units) -> bool:
    """May ``units`` run as one kernel (:func:`connected`), and is that worth trying (not
    :func:`_vector_solves_only`)? The cut search's test (:func:`flamefuse.synth.group.run_segment`
    and the background compiler's walk in the same order)."""
    return connected(seg, units) and not _vector_solves_only(seg, units)
