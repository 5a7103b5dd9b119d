"""The clustering ILP (Robinson et al. Fig. 1.14, with the corrections) and its solvers.

Variables: ``x_i_j`` (binary, 0 = i and j share a cluster) for every pair
that may fuse, ``p_i`` (integer position 0..N-1, π in the paper) for every
node, ``c_i`` (binary, 1 = i's array is not fully contracted) for every
array-producing node with consumers.  Objective: Σ W_ij·x_ij over pairs that
may fuse (W = N² for an edge or a shared input array, else 1) + N·Σ c_i.

:func:`build_model` writes the model solver-neutrally (:class:`Model`);
:func:`solve_cpsat` solves it with OR-Tools CP-SAT, :func:`solve_milp` with
SciPy's HiGHS ``milp`` (the cross-check).  :func:`solve` builds, solves,
forms clusters as union-find over pairs with x = 0, and re-solves with a cut
``x_ij ≤ Σ x_path`` whenever union-find puts two nodes together whose x is 1,
so that x = 0 exactly within clusters.  It returns a
:class:`~flamefuse.cluster.clusters.Clustering`.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from flamefuse import unionfind
from flamefuse.cluster.clusters import Clustering, cost, order
from flamefuse.cluster.graph import Graph


@dataclass(frozen=True)
class Linear:
    """lo ≤ Σ coef·var ≤ hi."""
    terms: tuple[tuple[str, int], ...]
    lo: float
    hi: float


@dataclass(frozen=True)
class Link:
    """x = 0 ⇒ p_i = p_j; and if ``ordered`` (an edge i → j), x = 1 ⇒ p_j ≥ p_i + 1.

    As linear rows (the paper's form): x ≤ p_j − p_i ≤ N·x for an edge,
    −N·x ≤ p_j − p_i ≤ N·x otherwise; CP-SAT gets enforcement literals.
    """
    x: str
    pi: str
    pj: str
    ordered: bool


@dataclass(frozen=True)
class Model:
    variables: tuple[tuple[str, int, int], ...]     # (name, lower, upper), all integer
    constraints: tuple[Linear, ...]
    objective: tuple[tuple[str, int], ...]
    links: tuple[Link, ...]
    big: int                                         # N, the big-M of the links

    def linear_rows(self) -> tuple[Linear, ...]:
        """All constraints as linear rows, links in the paper's big-M form."""
        rows = list(self.constraints)
        for k in self.links:
            rows.append(Linear(((k.pj, 1), (k.pi, -1), (k.x, -self.big)), -np.inf, 0))
            rows.append(Linear(((k.pj, 1), (k.pi, -1), (k.x, -1 if k.ordered else self.big)),
                               0, np.inf))
        return tuple(rows)


def xname(i: int, j: int) -> str:
    return f"x_{min(i, j)}_{max(i, j)}"


def build_model(g: Graph, same_size_only: bool = False, cuts=()) -> Model:
    n = g.n
    big = max(n, 1)
    fuse = {(i, j) for i in range(n) for j in range(i + 1, n)
            if g.may_fuse(i, j, same_size_only)}
    variables = [(xname(i, j), 0, 1) for i, j in sorted(fuse)]
    variables += [(f"p_{i}", 0, n - 1) for i in range(n)]
    objective = [(xname(i, j), g.weight(i, j)) for i, j in sorted(fuse)]
    cons: list[Linear] = []
    links: list[Link] = []

    def x(i, j):
        """A variable name, or the constant 0 (same node) / 1 (cannot fuse)."""
        return 0 if i == j else (xname(i, j) if (min(i, j), max(i, j)) in fuse else 1)

    def at_most(small, large):                # small ≤ large, either maybe constant
        terms = [(v, c) for v, c in ((small, 1), (large, -1)) if isinstance(v, str)]
        const = sum(c * v for v, c in ((small, 1), (large, -1)) if not isinstance(v, str))
        if terms:
            cons.append(Linear(tuple(terms), -np.inf, -const))

    for i, j in sorted(fuse):
        xv, pi, pj = xname(i, j), f"p_{i}", f"p_{j}"
        if (j, i) in g.edges:
            pi, pj = pj, pi
        links.append(Link(xv, pi, pj, (i, j) in g.edges or (j, i) in g.edges))
        if not same_size_only and g.iters[i] != g.iters[j]:
            a, b = g.concestors(i, j)
            for p, q in ((i, a), (j, b), (a, b)):
                at_most(x(p, q), xv)
    for (i, j) in sorted(g.edges):
        if (min(i, j), max(i, j)) not in fuse:         # πi < πj
            cons.append(Linear(((f"p_{j}", 1), (f"p_{i}", -1)), 1, np.inf))
    for i in range(n):
        outs = sorted(j for (a, j) in g.edges if a == i)
        if g.arrays[i] and outs:
            forced = any(x(i, j) == 1 for j in outs)
            variables.append((f"c_{i}", int(forced), 1))
            objective.append((f"c_{i}", n))
            for j in outs:
                at_most(x(i, j), f"c_{i}")
    for pair, path in cuts:
        terms = [(v, -1) for v in (x(*p) for p in path) if isinstance(v, str)]
        head = x(*pair)
        const = 1 if head == 1 else 0
        terms += [(head, 1)] if isinstance(head, str) else []
        cons.append(Linear(tuple(terms), -np.inf, -const))
    return Model(tuple(variables), tuple(cons), tuple(objective), tuple(links), big)


def solve_cpsat(model: Model, workers: int | None = None, time_limit: float | None = None):
    """Values of all variables at an optimum, and the objective, via CP-SAT.

    ``workers`` defaults to 1 (a deterministic search) up to 40 nodes and to a
    4-worker portfolio above, which is far faster on large programs but may
    return a different one of several equally good clusterings (on 12 random
    programs of 100 combinators and 2 cores: at most 7.3 s with 4 workers,
    13.8 s with 8)."""
    if workers is None:
        workers = 1 if model.big <= 40 else 4
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    var = {name: (m.new_bool_var(name) if (lo, hi) == (0, 1) else m.new_int_var(lo, hi, name))
           for name, lo, hi in model.variables}
    for c in model.constraints:
        expr = sum(coef * var[v] for v, coef in c.terms)
        if c.lo > -np.inf:
            m.add(expr >= int(c.lo))
        if c.hi < np.inf:
            m.add(expr <= int(c.hi))
    for k in model.links:
        fused = ~var[k.x]
        m.add(var[k.pi] == var[k.pj]).only_enforce_if(fused)
        if k.ordered:
            m.add(var[k.pj] >= var[k.pi] + 1).only_enforce_if(var[k.x])
    m.minimize(sum(coef * var[v] for v, coef in model.objective))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = 0
    if time_limit:
        solver.parameters.max_time_in_seconds = time_limit
    status = solver.solve(m)
    if status != cp_model.OPTIMAL:
        raise RuntimeError(f"CP-SAT did not prove optimality: {solver.status_name(status)}")
    values = {name: int(solver.value(v)) for name, v in var.items()}
    return values, sum(coef * values[v] for v, coef in model.objective)


def solve_milp(model: Model, time_limit: float | None = None):
    """The same model solved by SciPy's HiGHS ``milp``."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_array

    index = {name: k for k, (name, _, _) in enumerate(model.variables)}
    cost_vec = np.zeros(len(index))
    for v, coef in model.objective:
        cost_vec[index[v]] += coef
    constraints = ()
    rows = model.linear_rows()
    if rows:
        a = lil_array((len(rows), len(index)))
        for r, c in enumerate(rows):
            for v, coef in c.terms:
                a[r, index[v]] += coef
        constraints = LinearConstraint(a.tocsr(), [c.lo for c in rows], [c.hi for c in rows])
    bounds = Bounds([lo for _, lo, _ in model.variables], [hi for _, _, hi in model.variables])
    options = {"time_limit": time_limit} if time_limit else {}
    res = milp(cost_vec, integrality=np.ones(len(index)), bounds=bounds,
               constraints=constraints, options=options)
    if res.status != 0:
        raise RuntimeError(f"HiGHS milp failed: {res.message}")
    values = {name: int(round(res.x[k])) for name, k in index.items()}
    return values, sum(coef * values[v] for v, coef in model.objective)


SOLVERS = {"cpsat": solve_cpsat, "milp": solve_milp}


def solve(g: Graph, solver: str = "cpsat", same_size_only: bool = False,
          method: str = "ilp") -> Clustering:
    start = time.perf_counter()
    cuts: list = []
    while True:
        model = build_model(g, same_size_only, tuple(cuts))
        values, objective = SOLVERS[solver](model)
        fused = [(i, j) for i in range(g.n) for j in range(i + 1, g.n)
                 if values.get(xname(i, j)) == 0]
        groups = unionfind.groups(g.n, fused)
        new = _cuts(g.n, groups, fused, values)
        if not new:
            break
        cuts += new
    clusters = order(g, groups)
    assert cost(g, clusters, same_size_only) == objective, "x disagrees with the clusters"
    return Clustering(g, clusters, objective, method, solver, time.perf_counter() - start)


def _cuts(n, groups, fused, values):
    """For each same-cluster pair with x ≠ 0, a shortest x = 0 path between them."""
    adj: dict[int, list[int]] = {i: [] for i in range(n)}
    for i, j in fused:
        adj[i].append(j)
        adj[j].append(i)
    out = []
    for group in groups:
        for a in group:
            for b in group:
                if a < b and values.get(xname(a, b)) != 0:
                    out.append(((a, b), _path(adj, a, b)))
    return out


def _path(adj, a, b):
    prev = {a: None}
    queue = deque([a])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in prev:
                prev[v] = u
                queue.append(v)
    path, v = [], b
    while prev[v] is not None:
        path.append((prev[v], v))
        v = prev[v]
    return tuple(path)
