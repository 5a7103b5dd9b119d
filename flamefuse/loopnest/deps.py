"""Exact memory-based dependence analysis for the affine access class of :mod:`.ir`.

Every question is an integer feasibility (or optimisation) problem solved by
OR-Tools CP-SAT over the source instance ``x``, the target instance ``y`` and
the size parameters (each in ``[1, 2**40]``): both instances in their
rectangular domains, both accesses hitting the same element, plus the
question's constraints on distances ``y[b] - x[a]``.  For this access class
that is exact (no approximation beyond sizes below 2**40).

Program order: every instance of an earlier statement precedes every instance
of a later one; within a statement ``x`` precedes ``y`` iff ``x <lex y``.  So
dependences run from earlier to later statements, or are self-dependences.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from ortools.sat.python import cp_model

from flamefuse.loopnest.ir import Access, Program, Statement

BIG = 2 ** 40
SIGNS = ("+", "0", "-")


@dataclass(frozen=True)
class Dependence:
    """``kind`` is flow (write then read), anti (read then write) or output.

    ``directions`` (self-dependences only) are the feasible sign vectors of
    ``y - x`` per dimension ('+', '0', '-'); ``distance`` is the exact
    constant distance vector with ``None`` where it is not constant;
    ``reduction`` marks a reorderable reduction dependence (set by
    :func:`flamefuse.loopnest.reductions.analyse`)."""
    source: int
    target: int
    kind: str
    array: str
    source_access: Access
    target_access: Access
    directions: frozenset = frozenset()
    distance: tuple | None = None
    reduction: bool = False


@dataclass(frozen=True)
class Relation:
    """A constraint ``y[target_dim] - x[source_dim]  <sign>  0``."""
    source_dim: int
    target_dim: int
    sign: str


def _model(program: Program, dep_s: int, dep_t: int, acc_s: Access, acc_t: Access,
           relations: tuple[Relation, ...]):
    m = cp_model.CpModel()
    params = {p: m.NewIntVar(1, BIG, p) for p in program.params()}
    s, t = program.statements[dep_s], program.statements[dep_t]
    x = _instance(m, s, params, "x")
    y = _instance(m, t, params, "y")
    for ix, iy in zip(acc_s.index, acc_t.index):
        m.Add(_subscript(ix, x) == _subscript(iy, y))
    for r in relations:
        d = y[r.target_dim] - x[r.source_dim]
        m.Add(d > 0) if r.sign == "+" else m.Add(d == 0) if r.sign == "0" else m.Add(d < 0)
    return m, x, y


def _instance(m, st: Statement, params, tag):
    vs = [m.NewIntVar(0, BIG, f"{tag}{k}") for k in range(len(st.dims))]
    for v, b in zip(vs, st.extents):
        m.Add(v <= (params[b.param] if b.param else 0) + b.const - 1)
    return vs


def _subscript(ix, inst):
    return ix.offset if ix.dim is None else ix.coef * inst[ix.dim] + ix.offset


def _solve(m) -> cp_model.CpSolver | None:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.Solve(m)
    return solver if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None


@lru_cache(maxsize=65536)
def exists(program: Program, source: int, target: int, acc_s: Access, acc_t: Access,
           relations: tuple[Relation, ...] = ()) -> bool:
    """Is there a source instance of ``source`` and target instance of ``target``
    whose accesses meet and whose distances satisfy ``relations``?"""
    return _solve(_model(program, source, target, acc_s, acc_t, relations)[0]) is not None


def distance_range(program: Program, source: int, target: int, acc_s: Access, acc_t: Access,
                   relations: tuple[Relation, ...], sdim: int, tdim: int) -> tuple[int, int] | None:
    """Min and max of ``y[tdim] - x[sdim]`` under ``relations`` (None if infeasible)."""
    out = []
    for sense in (1, -1):
        m, x, y = _model(program, source, target, acc_s, acc_t, relations)
        m.Minimize(sense * (y[tdim] - x[sdim]))
        solver = _solve(m)
        if solver is None:
            return None
        out.append(sense * round(solver.ObjectiveValue()))
    return out[0], out[1]


def lex_positive(signs: tuple[str, ...]) -> bool:
    return next((s for s in signs if s != "0"), "0") == "+"


def self_directions(program: Program, k: int, acc_s: Access, acc_t: Access) -> frozenset:
    """The feasible lexicographically positive sign vectors of a self-dependence."""
    d = len(program.statements[k].dims)
    found = set()
    for signs in product(SIGNS, repeat=d):
        if lex_positive(signs) and exists(program, k, k, acc_s, acc_t,
                                          tuple(Relation(i, i, s) for i, s in enumerate(signs))):
            found.add(signs)
    return frozenset(found)


def _self_distance(program, k, acc_s, acc_t, directions) -> tuple | None:
    d = len(program.statements[k].dims)
    dist = []
    for dim in range(d):
        values = set()
        for signs in directions:
            rng = distance_range(program, k, k, acc_s, acc_t,
                                 tuple(Relation(i, i, s) for i, s in enumerate(signs)), dim, dim)
            values |= {rng[0], rng[1]} if rng[0] == rng[1] else {None}
        dist.append(values.pop() if len(values) == 1 else None)
    return tuple(dist)


def dependences(program: Program) -> tuple[Dependence, ...]:
    """All memory-based dependences between access pairs (at least one write)."""
    sts = program.statements
    out = []
    for si, ti in ((s, t) for s in range(len(sts)) for t in range(s, len(sts))):
        for a, aw in sts[si].accesses():
            for b, bw in sts[ti].accesses():
                if a.array != b.array or not (aw or bw):
                    continue
                kind = "output" if aw and bw else "flow" if aw else "anti"
                if si != ti:
                    if exists(program, si, ti, a, b):
                        out.append(Dependence(si, ti, kind, a.array, a, b))
                    continue
                dirs = self_directions(program, si, a, b)
                if dirs:
                    out.append(Dependence(si, ti, kind, a.array, a, b, dirs,
                                          _self_distance(program, si, a, b, dirs)))
    return tuple(_unique(out))


def _unique(deps):
    seen = set()
    for d in deps:
        key = (d.source, d.target, d.kind, d.source_access, d.target_access)
        if key not in seen:
            seen.add(key)
            yield d


def violated(program: Program, dep: Dependence, outer: tuple[tuple[int, int], ...],
             sdim: int, tdim: int, sign: str = "-") -> bool:
    """Can ``dep`` have distance ``sign`` on the pair (``sdim``, ``tdim``) while
    its distance is zero on every pair of ``outer`` (the loops both share)?"""
    rel = tuple(Relation(a, b, "0") for a, b in outer) + (Relation(sdim, tdim, sign),)
    if dep.source == dep.target:
        return any(exists(program, dep.source, dep.target, dep.source_access, dep.target_access,
                          rel + tuple(Relation(i, i, s) for i, s in enumerate(signs)))
                   for signs in dep.directions)
    return exists(program, dep.source, dep.target, dep.source_access, dep.target_access, rel)
