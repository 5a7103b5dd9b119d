"""Which outermost loops may run in parallel, and what they must privatise.

A top-level :class:`~flamefuse.loopnest.fcg.Loop` is parallel when no
non-reduction dependence between its statements is carried by it (positive
distance along its fused dimensions).  A carried *reduction* dependence is
allowed when its location is privatised: every thread accumulates into its
own copy, combined after the loop (Polly's privatisation, placement outside
the parallel loop) — provided no other statement in the loop touches that
array.  :func:`plan` returns a :class:`Plan` with the reason when it is not
parallel.
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.loopnest.deps import violated
from flamefuse.loopnest.fcg import Leaf, Loop
from flamefuse.loopnest.reductions import Analysis


@dataclass(frozen=True)
class Plan:
    parallel: bool
    private: tuple[int, ...]        # statements whose reduction location is privatised
    reason: str | None = None


def statements(node) -> tuple[int, ...]:
    if isinstance(node, Leaf):
        return (node.statement,)
    return tuple(s for child in node.body for s in statements(child))


def plan(an: Analysis, loop: Loop) -> Plan:
    p = an.program
    dim = dict(loop.members)
    inside = set(statements(loop))
    private = set()
    order = {"flow": 0, "output": 1, "anti": 2}
    for d in sorted(an.dependences, key=lambda d: order[d.kind]):
        if d.source not in inside or d.target not in inside:
            continue
        if not violated(p, d, (), dim[d.source], dim[d.target], "+"):
            continue
        if d.reduction:
            private.add(d.source)
            continue
        return Plan(False, (), f"{d.kind} dependence {p.statements[d.source].name} -> "
                               f"{p.statements[d.target].name} on {d.array} is carried")
    for s in private:
        r = an.reductions[s]
        arr = r.location(p).array
        users = [t for t in inside if any(a.array == arr for a, _ in p.statements[t].accesses())]
        own = {a for a, _ in p.statements[s].accesses() if a.array == arr}
        if users != [s] or not own <= {r.location(p), r.load}:
            return Plan(False, (), f"{arr} is reduced in parallel but also accessed otherwise")
    return Plan(True, tuple(sorted(private)))
