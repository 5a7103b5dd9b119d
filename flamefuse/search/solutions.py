"""Fused invariants (:class:`flamefuse.pme.invariant.Invariant`): their order, and the strips they imply."""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.pme.invariant import Invariant
from flamefuse.pme.model import Problem


def sort_key(inv: Invariant, sizes: list[int]) -> tuple:
    """Fewer past tasks first, then earlier tasks past first: a stable, readable order."""
    flags = tuple(0 if k in ks else 1 for ks, n in zip(inv.past, sizes) for k in range(n))
    return (sum(len(ks) for ks in inv.past), flags)


COMPUTED, PARTIAL, UNCOMPUTED, UNTOUCHED = "computed", "partial", "uncomputed", "-"


@dataclass(frozen=True)
class Strip:
    """A region across the operations: computed* partial? uncomputed*, and its bounds."""
    region: str
    cells: tuple[str, ...]   # one of COMPUTED / PARTIAL / UNCOMPUTED / UNTOUCHED per operation
    C: int                   # last operation leaving the region fully computed (-1: none)
    U: int                   # first operation leaving it fully uncomputed (N: none)


def strips(problem: Problem, inv: Invariant) -> tuple[Strip, ...]:
    """The strip of every region written or const-tracked in some operation."""
    n = len(problem.operations)
    regions = list(dict.fromkeys(t.out.region for op in problem.operations for t in op.tasks))
    out = []
    for r in regions:
        cells = []
        for op, ks in zip(problem.operations, inv.past):
            mine = [k for k, t in enumerate(op.tasks) if t.out.region == r]
            done = [k in ks for k in mine]
            cells.append(UNTOUCHED if not mine else COMPUTED if all(done)
                         else UNCOMPUTED if not any(done) else PARTIAL)
        touched = [i for i, c in enumerate(cells) if c != UNTOUCHED]
        computed = [i for i in touched if cells[i] == COMPUTED]
        after = [i for i in touched if cells[i] != COMPUTED]
        C = (after[0] - 1) if after else n - 1
        U_candidates = [i for i in touched if cells[i] != UNCOMPUTED]
        U = (U_candidates[-1] + 1) if U_candidates else 0
        out.append(Strip(r, tuple(cells), C if computed or after else -1, U))
    return tuple(out)
