"""Clusterings: the result type, its cost, its order, and a legality check.

:class:`Clustering` holds the graph, the clusters (tuples of node indices in
program order, clusters in a deterministic execution order: topological,
ties broken by the smallest node index), the objective (the ILP's cost
function evaluated on these clusters), the method and solver used, and the
solve time.  :meth:`Clustering.named` lists each cluster's bound names;
:meth:`Clustering.contracted` the intermediate arrays never materialised.

:func:`violations` lists what makes a clustering illegal (empty = legal):
a cycle between clusters, a fusion-preventing edge inside a cluster, an
external sharing a cluster, or a node whose iteration size is neither the
cluster's root size nor reached from it through filters in the cluster.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from flamefuse.cluster.graph import Graph


@dataclass(frozen=True, eq=False)
class Clustering:
    graph: Graph
    clusters: tuple[tuple[int, ...], ...]
    objective: int
    method: str
    solver: str | None
    seconds: float

    def named(self) -> list[list[str]]:
        bs = self.graph.program.bindings
        return [[o for i in c for o in bs[i].outputs] for c in self.clusters]

    def cluster_of(self) -> dict[int, int]:
        return {i: k for k, c in enumerate(self.clusters) for i in c}

    def contracted(self) -> list[str]:
        """Intermediate arrays whose producer and every consumer share a cluster."""
        g, where = self.graph, self.cluster_of()
        out = []
        for i, b in enumerate(g.program.bindings):
            if b.kind == "external" or not b.array_outputs or b.name in g.program.returns:
                continue
            if all(where[j] == where[i] for (a, j) in g.edges if a == i):
                out.append(b.name)
        return out

    def as_json(self) -> dict:
        return {"method": self.method, "solver": self.solver, "clusters": self.named(),
                "loops": sum(1 for c in self.clusters
                             if self.graph.program.bindings[c[0]].kind != "external"),
                "objective": self.objective, "contracted": self.contracted(),
                "scheme": self.graph.sizes.scheme, "seconds": round(self.seconds, 6)}


def order(g: Graph, groups) -> tuple[tuple[int, ...], ...]:
    """Clusters in topological order, ties by smallest member; raises on a cycle."""
    groups = [tuple(sorted(c)) for c in groups]
    where = {i: k for k, c in enumerate(groups) for i in c}
    succ = {k: set() for k in range(len(groups))}
    for a, b in g.edges:
        if where[a] != where[b]:
            succ[where[a]].add(where[b])
    indeg = {k: 0 for k in succ}
    for k in succ:
        for m in succ[k]:
            indeg[m] += 1
    heap = [(groups[k][0], k) for k in succ if indeg[k] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        _, k = heapq.heappop(heap)
        out.append(groups[k])
        for m in succ[k]:
            indeg[m] -= 1
            if indeg[m] == 0:
                heapq.heappush(heap, (groups[m][0], m))
    if len(out) != len(groups):
        raise ValueError("the clusters form a cycle")
    return tuple(out)


def cost(g: Graph, clusters, same_size_only: bool = False) -> int:
    """The ILP objective for a given clustering (pairs that may fuse, plus N·c);
    ``same_size_only`` counts only pairs the Megiddo-style model lets fuse."""
    where = {i: k for k, c in enumerate(clusters) for i in c}
    total = sum(g.weight(i, j) for i in range(g.n) for j in range(i + 1, g.n)
                if where[i] != where[j] and g.may_fuse(i, j, same_size_only))
    for i in range(g.n):
        if g.arrays[i] and any(where[j] != where[i] for (a, j) in g.edges if a == i):
            total += g.n
    return total


def violations(g: Graph, clusters) -> list[str]:
    out = []
    try:
        order(g, clusters)
    except ValueError as err:
        out.append(str(err))
    where = {i: k for k, c in enumerate(clusters) for i in c}
    bs = g.program.bindings
    for (a, b), fusible in g.edges.items():
        if where[a] == where[b] and not fusible:
            out.append(f"fusion-preventing edge {g.names[a]} -> {g.names[b]} inside a cluster")
    for c in clusters:
        if len(c) > 1 and any(bs[i].kind == "external" for i in c):
            out.append(f"external in a shared cluster {[g.names[i] for i in c]}")
            continue
        roots = {g.iters[i] for i in c if g.trans[i] is None or g.trans[i] not in c}
        if len(roots) > 1:
            out.append(f"cluster {[g.names[i] for i in c]} mixes unrelated iteration sizes")
    return out
