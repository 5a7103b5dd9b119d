"""The Weighted Subroutine Partition graph of a :class:`Program`, and its cost.

``build(program)`` returns a :class:`Graph`: ``succ[i]`` are the ops that must
run after op ``i`` (RAW, WAR, WAW on overlapping views), ``forbidden`` the
pairs ``(i, j)``, ``i < j``, that may not share a block:

* different iteration shapes, or two reductions of different axes;
* a reduction and any other op touching its output (its consumers);
* an output view of one op that overlaps, without being identical to, a view
  the other reads or writes (Bohrium's data-parallel rule). A wrapped view
  (``np.roll`` read in place, :mod:`.views`) covers its whole unwrapped
  extent and is identical only to the same wrapped view, so a write into the
  elements a wrapped view reads never shares its block: no kernel reads an
  element that it, or an op before it in the same block, overwrote.

Cost (bytes): a block pays, for each distinct (base, view) it reads and each it
writes, the view's bytes; a base is *contracted* (costs nothing, never
allocated) in a block that holds every access to it, when it is fresh, dead,
accessed through one view only, written before it is read, and not a
reduction's result. This refines
the paper's ``ext[B]`` and stays monotone. ``cost(graph, blocks)`` sums it.
"""
from __future__ import annotations

from functools import reduce

import numpy as np

from flamefuse.runtime.program import Op, Program, Ref
from flamefuse.runtime.views import overlap
from flamefuse.values import value

_set = object.__setattr__


@value
class Graph:
    """The dependency graph of a recorded program (see the module doc). A frozen value
    (:mod:`flamefuse.values`)."""
    n: int
    succ: tuple[frozenset, ...]
    forbidden: frozenset
    resources: tuple[frozenset, ...]      # per op: {(base, view, "r"|"w")}
    weight: dict                          # resource -> bytes
    contract: dict                        # base -> frozenset(ops accessing it)
    shapes: tuple = ()                    # per op: iteration shape (ops of two shapes never fuse)

    def __init__(self, n, succ, forbidden, resources, weight, contract, shapes=()):
        _set(self, "n", n)
        _set(self, "succ", succ)
        _set(self, "forbidden", forbidden)
        _set(self, "resources", resources)
        _set(self, "weight", weight)
        _set(self, "contract", contract)
        _set(self, "shapes", shapes)

    def pred(self) -> tuple[frozenset, ...]:
        preds = [set() for _ in range(self.n)]
        for i, ss in enumerate(self.succ):
            for j in ss:
                preds[j].add(i)
        return tuple(frozenset(p) for p in preds)


def _touches(a: Ref, b: Ref) -> bool:
    return a.base == b.base and overlap(a.view, b.view)


def _depends(f: Op, g: Op) -> bool:
    fo, go = f.out, g.out
    return (_touches(fo, go) or any(_touches(fo, r) for r in g.refs_in())
            or any(_touches(r, go) for r in f.refs_in()))


def _clash(o: Ref, r: Ref) -> bool:
    return o.base == r.base and o.view != r.view and overlap(o.view, r.view)


def _fusible(f: Op, g: Op) -> bool:
    if f.shape != g.shape:
        return False
    fr, gr = f.kind == "reduce", g.kind == "reduce"
    if fr and gr and f.axis != g.axis:
        return False
    for red, other in ((f, g), (g, f)):
        if red.kind == "reduce":
            refs = (other.out,) + other.refs_in()
            if any(_touches(red.out, r) for r in refs):
                return False
    for a, b in ((f, g), (g, f)):
        if any(_clash(a.out, r) for r in (b.out,) + b.refs_in()):
            return False
    return True


def _contractible(program: Program) -> dict:
    views, accessors, first_write = {}, {}, {}
    reduced = {op.out.base for op in program.ops if op.kind == "reduce"}
    for i, op in enumerate(program.ops):
        for r, w in [(r, False) for r in op.refs_in()] + [(op.out, True)]:
            views.setdefault(r.base, set()).add(r.view)
            accessors.setdefault(r.base, set()).add(i)
            first_write.setdefault(r.base, (i, w and r not in op.refs_in()))
    return {b: frozenset(accessors[b]) for b, info in enumerate(program.bases)
            if info.fresh and info.dead and b in views and len(views[b]) == 1 and b not in reduced
            and first_write[b][1]}


def build(program: Program) -> Graph:
    ops = program.ops
    n = len(ops)
    succ, forbidden = [set() for _ in range(n)], set()
    bases_of = [{r.base for r in (op.out,) + op.refs_in()} for op in ops]
    for i in range(n):
        for j in range(i + 1, n):
            if bases_of[i] & bases_of[j] and _depends(ops[i], ops[j]):
                succ[i].add(j)
            if not _fusible(ops[i], ops[j]):
                forbidden.add((i, j))
    resources, weight = [], {}
    for op in ops:
        res = {(r.base, r.view, "r") for r in op.refs_in()} | {(op.out.base, op.out.view, "w")}
        for key in res:
            weight[key] = key[1].distinct * np.dtype(program.bases[key[0]].dtype).itemsize
        resources.append(frozenset(res))
    return Graph(n, tuple(frozenset(s) for s in succ), frozenset(forbidden),
                 tuple(resources), weight, _contractible(program), tuple(op.shape for op in ops))


def contracted(graph: Graph, block) -> frozenset:
    """Bases contracted to scalars inside ``block``."""
    return frozenset(b for b, acc in graph.contract.items() if acc <= block)


def block_cost(graph: Graph, block) -> int:
    res = reduce(frozenset.union, (graph.resources[i] for i in block), frozenset())
    gone = contracted(graph, block)
    return sum(graph.weight[r] for r in res if r[0] not in gone)


def cost(graph: Graph, blocks) -> int:
    return sum(block_cost(graph, b) for b in blocks)


def block_edges(graph: Graph, blocks) -> dict:
    """Successor map between block indices."""
    where = {i: k for k, b in enumerate(blocks) for i in b}
    out = {k: set() for k in range(len(blocks))}
    for i, ss in enumerate(graph.succ):
        for j in ss:
            if where[i] != where[j]:
                out[where[i]].add(where[j])
    return out


def topo_order(graph: Graph, blocks) -> list[int] | None:
    """Block indices in dependency order, or None if the quotient graph has a cycle."""
    edges = block_edges(graph, blocks)
    indeg = {k: 0 for k in edges}
    for ss in edges.values():
        for t in ss:
            indeg[t] += 1
    ready = sorted(k for k, d in indeg.items() if d == 0)
    order = []
    while ready:
        k = ready.pop(0)
        order.append(k)
        for t in sorted(edges[k]):
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
    return order if len(order) == len(blocks) else None


def has_forbidden(graph: Graph, block) -> bool:
    members = sorted(block)
    return any((a, b) in graph.forbidden for x, a in enumerate(members) for b in members[x + 1:])


def is_legal(graph: Graph, blocks) -> bool:
    covered = sorted(i for b in blocks for i in b)
    return (covered == list(range(graph.n)) and not any(has_forbidden(graph, b) for b in blocks)
            and topo_order(graph, blocks) is not None)
