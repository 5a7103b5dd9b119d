"""Reduction detection after Polly (Doerfert, Streit, Hack, Grosser).

A store ``s`` of a statement is *reduction-like* when its value is one chain
of a single associative and commutative operation (+, *, min, max, &, |, ^;
``a - b`` counts as ``+`` when the loaded value is ``a``) over exactly one
load ``l`` that (partially) overlaps the stored location, no other access of
the statement overlaps that location, and the intermediate value does not
escape into another store (:class:`~flamefuse.loopnest.ir.Stored`).
:func:`classify` returns a :class:`Reduction` or a :class:`NotReduction`
with the reason.

Floating-point ``+`` and ``*`` are reorderable only with ``reorder_float``
(re-association changes rounding); min and max, and every integer or
boolean reduction, always are.  :func:`analyse` marks the self-dependences
between the accesses of a reorderable reduction as *reduction dependences*
(``Dependence.reduction``): the scheduler may reorder and parallelise them
when the location is privatised.  Polly's privatisation dependences (other
statements touching the location stay before or after the whole reduction)
are already contained in this analysis, because it is memory-based: every
reduction instance that writes the location has its own dependence with
every other statement instance that touches it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from flamefuse.loopnest.deps import Dependence, dependences, exists
from flamefuse.loopnest.ir import Access, Bin, Call, Expr, Load, Program, expr_loads, expr_stored

ASSOCIATIVE = ("+", "*", "min", "max", "&", "|", "^")
FLOAT_INEXACT = ("+", "*")
TOP = "non-associative"
RAW = "unused"


@dataclass(frozen=True)
class Reduction:
    statement: int
    store: int
    op: str
    reorderable: bool
    load: Access | None = None     # the reduction load (may differ from the store's access)

    def location(self, program: Program):
        return program.statements[self.statement].stores[self.store].access


@dataclass(frozen=True)
class NotReduction:
    statement: int
    reason: str


@dataclass(frozen=True)
class Analysis:
    program: Program
    dependences: tuple[Dependence, ...]
    reductions: tuple  # one Reduction | NotReduction per statement
    reorder_float: bool


def chain_op(e: Expr, load: Load) -> str | None:
    """How the value of ``load`` reaches the root of ``e``: None (not at all),
    ``RAW`` (unchanged), an operator of ASSOCIATIVE, or ``TOP``."""
    if e == load:
        return RAW
    if isinstance(e, Call):
        return TOP if chain_op(e.arg, load) is not None else None
    if not isinstance(e, Bin):
        return None
    left, right = chain_op(e.left, load), chain_op(e.right, load)
    if left is None and right is None:
        return None
    if left is not None and right is not None:
        return TOP
    sub = left if left is not None else right
    op = "+" if e.op == "-" and left is not None else e.op
    if op not in ASSOCIATIVE or sub == TOP or (sub != RAW and sub != op):
        return TOP
    return op


def classify(program: Program, k: int, reorder_float: bool = False):
    st = program.statements[k]

    def overlap(a, b):
        return a.array == b.array and exists(program, k, k, a, b)

    for si, s in enumerate(st.stores):
        hits = [a for a in expr_loads(s.value) if overlap(s.access, a)]
        if not hits:
            continue
        if len(hits) > 1:
            return NotReduction(k, f"{len(hits)} loads of {s.access.array} overlap the stored location")
        op = chain_op(s.value, Load(hits[0]))
        if op == RAW:
            return NotReduction(k, "the loaded value is stored unchanged")
        if op == TOP:
            return NotReduction(k, "the loaded value reaches the store through a non-associative "
                                   "or mixed operation")
        for sj, other in enumerate(st.stores):
            if sj != si and si in expr_stored(other.value):
                return NotReduction(k, f"the intermediate value escapes into store {sj} "
                                       f"({other.access.array})")
            others = ([other.access] if sj != si else []) + \
                [a for a in expr_loads(other.value) if a != hits[0] or sj != si]
            if any(overlap(s.access, a) or overlap(hits[0], a) for a in others):
                return NotReduction(k, f"another access of statement {st.name} overlaps the "
                                       f"reduction location {s.access.array}")
        inexact = program.array(s.access.array).dtype.startswith("float") and op in FLOAT_INEXACT
        return Reduction(k, si, op, reorder_float or not inexact, hits[0])
    return NotReduction(k, "no load of a stored location")


def analyse(program: Program, reorder_float: bool = False) -> Analysis:
    """Dependences with reorderable reduction dependences marked, and the
    classification of every statement."""
    reds = tuple(classify(program, k, reorder_float) for k in range(len(program.statements)))
    deps = []
    for d in dependences(program):
        r = reds[d.source]
        if d.source == d.target and isinstance(r, Reduction) and r.reorderable:
            own = {r.location(program), r.load}
            if d.source_access in own and d.target_access in own:
                d = replace(d, reduction=True)
        deps.append(d)
    return Analysis(program, tuple(deps), reds, reorder_float)
