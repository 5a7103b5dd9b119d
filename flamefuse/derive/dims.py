"""Dimension classes: which partitioned dimensions of the operands move together.

Every operand has a row and a column dimension; the tasks tie them together
(``X * Y``: the columns of X are the rows of Y; ``L \\ X``: L is square and its
columns are the rows of X; ``sylv(A, B, C)``: A is square on C's rows, B on
C's columns; a sum's terms have one shape).  ``classes(problem)`` unifies them
and numbers the classes of the *partitioned* dimensions in order of first
appearance: ``{operand: (row class, column class)}``, ``None`` for an
undivided dimension.  One class (every shipped spec but one) is one loop
index moving one way; the triangular Sylvester equation has two, C's rows
(with A) and C's columns (with B), each with its own direction.
"""
from __future__ import annotations

from flamefuse.pme.model import AnyOf, Fn, Problem, State
from flamefuse.unionfind import DisjointSets

SQUARE = ("inv", "chol", "lu", "ul", "unit_lower", "upper", "trinv", "lauum")


class _Unify(DisjointSets):
    def union(self, a, b) -> None:
        """Join two dimensions; None (an undivided dimension, or no operand) joins nothing."""
        if a is not None and b is not None:
            super().union(a, b)


def _operand_of(problem: Problem, region: str) -> str:
    names = {o.name.lower(): o.name for o in problem.operands}
    return names[region.rsplit("_", 1)[0]]


_LAST: list = [None, {}]        # the problem last asked about and its classes


def classes(problem: Problem) -> dict[str, tuple]:
    """The classes of ``problem`` (kept for the problem last asked about: a derivation asks for
    them at every layout of the same problem; a copy of the dict, so a caller may change its own)."""
    if _LAST[0] is not problem:
        _LAST[:] = [problem, _classes(problem)]
    return dict(_LAST[1])


def _classes(problem: Problem) -> dict[str, tuple]:
    u = _Unify()

    used = set()

    def dims(e):
        if isinstance(e, State):
            o = _operand_of(problem, e.region)
            used.add(o)
            return (o, 0), (o, 1)
        if isinstance(e, AnyOf):
            ds = [dims(s) for s in e.options]
            for d in ds[1:]:
                u.union(d[0], ds[0][0])
                u.union(d[1], ds[0][1])
            return ds[0]
        if not isinstance(e, Fn):
            return None
        args = [dims(a) for a in e.args]
        if e.name == "tr" and args[0]:
            return args[0][1], args[0][0]
        if e.name == "mul" and args[0] and args[1]:
            u.union(args[0][1], args[1][0])
            return args[0][0], args[1][1]
        if e.name == "lsolve":
            u.union(args[0][0], args[0][1])
            u.union(args[0][1], args[1][0])
            return args[1]
        if e.name == "rsolve":
            u.union(args[1][0], args[1][1])
            u.union(args[0][1], args[1][0])
            return args[0]
        if e.name == "sylv":
            a, b, c = args
            u.union(a[0], a[1])
            u.union(a[0], c[0])
            u.union(b[0], b[1])
            u.union(b[0], c[1])
            return c
        shaped = [d for d in args if d]
        for d in shaped[1:]:
            u.union(d[0], shaped[0][0])
            u.union(d[1], shaped[0][1])
        if shaped and e.name in SQUARE:
            u.union(shaped[0][0], shaped[0][1])
        return shaped[0] if shaped else None

    for op in problem.operations:
        for t in op.tasks:
            if t.expr is not None:
                d = dims(t.expr)
                o = dims(t.out)
                if d:
                    u.union(d[0], o[0])
                    u.union(d[1], o[1])
            elif isinstance(getattr(t, "out", None), State):
                dims(t.out)
    for o in problem.operands:
        if o.partition == "2x2" and o.structure != "general":
            u.union((o.name, 0), (o.name, 1))    # a triangular or symmetric operand splits at its diagonal
    numbers: dict = {}
    out = {}
    for o in problem.operands:
        if o.name not in used:          # no operation uses it: no class (it is never traversed)
            out[o.name] = (None, None)
            continue
        split = (o.kind == "vector" or o.partition in ("2x2", "rows"), o.kind == "matrix" and o.partition in ("2x2", "columns"))
        ids = []
        for axis, divided in enumerate(split):
            if not divided:
                ids.append(None)
                continue
            root = u.find((o.name, axis))
            ids.append(numbers.setdefault(root, len(numbers)))
        out[o.name] = tuple(ids)
    return out
