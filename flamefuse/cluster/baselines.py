"""Baseline clusterings to compare against (Robinson et al. Table 1.1).

* ``unfused``: one loop per combinator.
* ``megiddo``: the same ILP without fusion across different iteration
  sizes (imperative loop fusion: a filter's consumers run in a later loop).
* ``stream``: pull-stream fusion: a producer joins its consumer along a
  fusible edge only when that consumer is its single use and its array is
  not returned (so a filter fuses only with its single consumer, and an
  array read by two combinators is read in two loops).

Each returns a :class:`~flamefuse.cluster.clusters.Clustering` whose
objective is the ILP cost function evaluated on it, comparable with the
optimum.
"""
from __future__ import annotations

import time

from flamefuse import unionfind
from flamefuse.cluster.clusters import Clustering, cost, order
from flamefuse.cluster.graph import Graph
from flamefuse.cluster.solve import solve


def unfused(g: Graph) -> Clustering:
    clusters = order(g, [[i] for i in range(g.n)])
    return Clustering(g, clusters, cost(g, clusters), "unfused", None, 0.0)


def megiddo(g: Graph, solver: str = "cpsat") -> Clustering:
    found = solve(g, solver, same_size_only=True, method="megiddo")
    return Clustering(g, found.clusters, cost(g, found.clusters), "megiddo", solver,
                      found.seconds)


def stream(g: Graph) -> Clustering:
    start = time.perf_counter()
    uses: dict[int, list[int]] = {}
    for a, b in g.edges:
        uses.setdefault(a, []).append(b)
    returned = set(g.program.returns)
    bs = g.program.bindings
    pairs = [(a, b) for (a, b), fusible in g.edges.items()
             if fusible and len(uses[a]) == 1 and not returned & set(bs[a].outputs)
             and g.may_fuse(a, b)]
    clusters = order(g, unionfind.groups(g.n, pairs))
    return Clustering(g, clusters, cost(g, clusters), "stream", None,
                      time.perf_counter() - start)
