"""Fusion conflict graph and greedy convex colouring (after pluto-lp-dfp).

Vertices are (statement, dimension).  At one loop level, inside a group of
statements that share every outer loop, a vertex (T, b) has a *self edge*
when T's dimension b cannot be the next loop (a non-reduction
self-dependence could then run backwards), and an edge to (S, a) when
fusing S's dimension a with T's dimension b into one loop could run a
dependence between them backwards (:func:`conflict`).  Dependences already
carried by an outer loop are excluded exactly: every question fixes the
distance on the shared outer loops to zero.  Dimensions of one statement
always conflict (one colour per statement per level).

Colouring (:func:`schedule`) goes level by level, statements in the
topological order of the dependence graph's SCCs (program order: dependences
only run forward, see :mod:`.deps`): the first statement opens a colour and
each later one joins it with its best conflict-free dimension of the same
extent; one that cannot (or that depends on a statement that could not) is
cut from it and left for the next colour, which runs after this one.  So
colours stay convex, and statements without dependences between them fuse
by extent, as in typed fusion.  A fusion that would make a statement's innermost loop stride over
the rows of a matrix is refused as a cost-model cut, and each cut keeps its
reasons (:class:`Cut`).  No loop shifting or skewing is applied.

The result is a :class:`Schedule`: a tree of :class:`Loop` (one colour: its
member (statement, dimension) pairs and body) and :class:`Leaf` nodes, plus
the permutation of every statement (its dimensions outermost first).
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.loopnest.deps import violated
from flamefuse.loopnest.ir import Bound, Program
from flamefuse.loopnest.reductions import Analysis


@dataclass(frozen=True)
class Leaf:
    statement: int


@dataclass(frozen=True)
class Loop:
    level: int
    extent: Bound
    members: tuple[tuple[int, int], ...]   # (statement, dimension)
    body: tuple                             # Loop | Leaf nodes in execution order


@dataclass(frozen=True)
class Cut:
    level: int
    statement: int
    colour: tuple[int, ...]   # the statements of the colour it could not join
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Schedule:
    roots: tuple
    permutations: tuple[tuple[int, ...], ...]
    cuts: tuple[Cut, ...]

    def explain(self, program: Program) -> list[str]:
        names = [s.name for s in program.statements]
        return [f"level {c.level}: {names[c.statement]} not fused with "
                f"{', '.join(names[s] for s in c.colour)}: {'; '.join(c.reasons)}" for c in self.cuts]


def _deps_between(an: Analysis, s: int, t: int):
    order = {"flow": 0, "output": 1, "anti": 2}
    return sorted((d for d in an.dependences if d.source == s and d.target == t and not d.reduction),
                  key=lambda d: order[d.kind])


def self_edge(an: Analysis, t: int, outer: tuple[int, ...], b: int) -> str | None:
    """Why dimension ``b`` of statement ``t`` cannot be the next loop (None: it can)."""
    pairs = tuple(zip(outer, outer))
    for d in _deps_between(an, t, t):
        if violated(an.program, d, pairs, b, b):
            return (f"{d.kind} self-dependence on {d.array} would run backwards along "
                    f"{an.program.statements[t].dims[b]}")
    return None


def conflict(an: Analysis, s: int, a: int, outer_s, t: int, b: int, outer_t) -> str | None:
    """Why (s, a) and (t, b) cannot share the next loop (s before t; None: they can)."""
    pairs = tuple(zip(outer_s, outer_t))
    p = an.program
    for d in _deps_between(an, s, t):
        if violated(p, d, pairs, a, b):
            return (f"{d.kind} dependence {p.statements[s].name} -> {p.statements[t].name} on "
                    f"{d.array}: {p.statements[t].name} would touch an element of {d.array} before "
                    f"{p.statements[s].name} is done with it "
                    f"(distance {p.statements[t].name}.{p.statements[t].dims[b]} - "
                    f"{p.statements[s].name}.{p.statements[s].dims[a]} can be negative)")
    return None


def layout_penalty(program: Program, t: int, innermost: int) -> int:
    """Accesses of rank >= 2 whose last subscript does not run along ``innermost``."""
    return sum(1 for acc, _ in program.statements[t].accesses()
               if len(acc.index) >= 2 and acc.index[-1].dim != innermost)


def _best_penalty(program, t, fixed, b):
    rest = [d for d in range(len(program.statements[t].dims)) if d not in fixed and d != b]
    return min(layout_penalty(program, t, d) for d in (rest or [b]))


def _matching(program, t, b, members):
    """Shared arrays whose same axis the candidate and the colour's members index."""
    axes = {(acc.array, k) for s, a in members for acc, _ in program.statements[s].accesses()
            for k, ix in enumerate(acc.index) if ix.dim == a}
    return sum(1 for acc, _ in program.statements[t].accesses()
               for k, ix in enumerate(acc.index) if ix.dim == b and (acc.array, k) in axes)


def schedule(an: Analysis) -> Schedule:
    """Colour the fusion conflict graph of ``an.program`` into a :class:`Schedule`."""
    p = an.program
    n = len(p.statements)
    cuts: list[Cut] = []
    fixed = {k: () for k in range(n)}
    roots = _level(an, list(range(n)), fixed, 0, cuts)
    return Schedule(roots, tuple(fixed[k] for k in range(n)), tuple(cuts))


def _level(an, stmts, fixed, level, cuts):
    """Nodes for ``stmts`` (sharing all outer loops) from loop level ``level`` on."""
    p = an.program
    nodes = []
    while stmts:
        first, rest = stmts[0], stmts[1:]
        if len(fixed[first]) == len(p.statements[first].dims):
            nodes.append(Leaf(first))
            stmts = rest
            continue
        colour = [(first, _alone(an, first, fixed))]
        deferred = []
        for t in rest:
            b, reasons = _join(an, colour, deferred, fixed, t)
            if b is None:
                deferred.append(t)
                if reasons:
                    cuts.append(Cut(level, t, tuple(s for s, _ in colour), reasons))
            else:
                colour.append((t, b))
        extent = p.statements[first].extents[colour[0][1]]
        for s, d in colour:
            fixed[s] = fixed[s] + (d,)
        body = _level(an, [s for s, _ in colour], fixed, level + 1, cuts)
        nodes.append(Loop(level, extent, tuple(colour), body))
        stmts = deferred
    return tuple(nodes)


def _legal(an, t, fixed):
    st = an.program.statements[t]
    free = [d for d in range(len(st.dims)) if d not in fixed[t]]
    return {d: self_edge(an, t, fixed[t], d) for d in free}


def _alone(an, t, fixed):
    legal = [d for d, why in _legal(an, t, fixed).items() if why is None]
    return min(legal, key=lambda d: (_best_penalty(an.program, t, fixed[t], d), d))


def _join(an, colour, deferred, fixed, t):
    """The dimension of ``t`` joining ``colour`` (None, reasons when it cannot).

    ``t`` may not join when it depends on a deferred statement (the colour
    runs before them), nor when all its dimensions are placed (a leaf)."""
    p = an.program
    waits = sorted({d.source for d in an.dependences if d.source in deferred and d.target == t})
    if waits:
        names = ", ".join(p.statements[w].name for w in waits)
        return None, (f"depends on {names}, which could not join",)
    cands = _legal(an, t, fixed)
    if not cands:
        return None, ()
    legal = [d for d, why in cands.items() if why is None]
    alone = min(_best_penalty(p, t, fixed[t], d) for d in legal)
    reasons, fits = [], []
    for b, why in cands.items():
        why = why or _fusion_obstacle(an, colour, fixed, t, b, alone)
        (reasons.append(f"{p.statements[t].dims[b]}: {why}") if why else fits.append(b))
    if not fits:
        return None, tuple(reasons)
    return max(fits, key=lambda b: (_matching(p, t, b, colour), -b)), ()


def _fusion_obstacle(an, colour, fixed, t, b, alone):
    p = an.program
    extent = p.statements[colour[0][0]].extents[colour[0][1]]
    if p.statements[t].extents[b] != extent:
        return f"extent {p.statements[t].extents[b]} differs from the loop's {extent}"
    for s, a in colour:
        why = conflict(an, s, a, fixed[s], t, b, fixed[t])
        if why:
            return why
    if _best_penalty(p, t, fixed[t], b) > alone:
        return "the innermost loop would stride across matrix rows (cost model)"
    return None
