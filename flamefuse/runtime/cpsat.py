"""Exact Weighted Subroutine Partition by CP-SAT (OR-Tools).

Model: each op ``v`` gets a block number ``b_v`` in ``0..n-1``; a dependency
``u -> v`` requires ``b_u <= b_v`` (numbered blocks are a topological order,
so every acyclic partition is representable); a forbidden pair requires
``b_u != b_v``. ``z[v,k]`` is ``b_v == k``; a resource (base, view, read or
write) pays its bytes once per block that touches it (``y[r,k] >= z[v,k]``);
a contractible base whose accessors all share one block (``c_t``) pays
nothing. ``solve(graph, time_limit, hint)`` returns ``(blocks, proved_optimal)``;
``hint`` (the greedy partition, from :mod:`flamefuse.runtime.partition`) starts the search.
"""
from __future__ import annotations

from ortools.sat.python import cp_model

from flamefuse.runtime.graph import Graph

TIME_LIMIT = 20.0


def solve(graph: Graph, time_limit: float = TIME_LIMIT, hint=()):
    """``(blocks, proved_optimal)``; ``hint``: blocks in dependency order to start from."""
    n = graph.n
    if n == 0:
        return (), True
    m = cp_model.CpModel()
    b = [m.NewIntVar(0, n - 1, f"b{v}") for v in range(n)]
    z = [[m.NewBoolVar(f"z{v}_{k}") for k in range(n)] for v in range(n)]
    for v in range(n):
        m.AddExactlyOne(z[v])
        m.Add(b[v] == sum(k * z[v][k] for k in range(n)))
    for u, ss in enumerate(graph.succ):
        for v in ss:
            m.Add(b[u] <= b[v])
    for u, v in graph.forbidden:
        m.Add(b[u] != b[v])
    users = {}
    for v, res in enumerate(graph.resources):
        for r in res:
            users.setdefault(r, []).append(v)
    objective = []
    for r, vs in users.items():
        y = [m.NewBoolVar("") for _ in range(n)]
        for k in range(n):
            for v in vs:
                m.AddImplication(z[v][k], y[k])
        objective.append(graph.weight[r] * sum(y))
    for t, acc in graph.contract.items():
        c = m.NewBoolVar(f"c{t}")
        acc = sorted(acc)
        for v in acc[1:]:
            m.Add(b[v] == b[acc[0]]).OnlyEnforceIf(c)
        objective.append(-sum(graph.weight[r] for r in users if r[0] == t) * c)
    m.Minimize(sum(objective))
    for k, blk in enumerate(hint):
        for v in blk:
            m.AddHint(b[v], k)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 2
    status = solver.Solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return hint, False
    groups = {}
    for v in range(n):
        groups.setdefault(solver.Value(b[v]), set()).add(v)
    return tuple(frozenset(g) for _, g in sorted(groups.items())), status == cp_model.OPTIMAL
