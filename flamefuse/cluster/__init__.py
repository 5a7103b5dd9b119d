"""Clustering array programs with filters by integer programming.

After Robinson, Lippmeier & Keller, "Fusing filters with integer linear
programming" (FHPC 2014), with the corrections recorded in the project's
notes (corrected ``trans``, concestors return the ancestor pair, the
objective sums over every pair that may fuse, clusters are union-find over
x = 0).

Pipeline (each step a plain function over immutable values):

1. a :class:`Program` in combinator normal form, from ``.comb`` text
   (:func:`parse_file`, :func:`parse_text`; syntax in
   :mod:`flamefuse.cluster.parse`) or from Python (:class:`Builder`);
2. :func:`infer` (size inference with rigid sizes, :mod:`.sizes`);
3. :func:`build` (dependency graph, iteration sizes, transducers,
   concestors, fusion-preventing edges, :mod:`.graph`);
4. :func:`cluster` (the optimal clustering by CP-SAT, or HiGHS with
   ``solver="milp"``; or a baseline ``"unfused"``, ``"megiddo"``,
   ``"stream"``) returning a :class:`Clustering` (``.named()``,
   ``.objective``, ``.contracted()``, ``.as_json()``);
5. :func:`compile_program` (one Numba loop per cluster; ``.run(inputs)``
   returns the program's results) and :func:`evaluate` (the naive NumPy
   reference), in :mod:`.execute`;
6. :func:`to_dot` (a cluster diagram in Graphviz DOT, :mod:`.dot`).

Example::

    from flamefuse.cluster import parse_file, cluster
    c = cluster(parse_file("normalize2.comb"))
    c.named()      # [['sum1', 'gts', 'sum2'], ['ys1', 'ys2']]
    c.objective    # 51

Other front ends (e.g. a lazy-array runtime) can build a :class:`Program`
with :class:`Builder` and call :func:`cluster` to partition it. A combinator's
element function is a worker expression (:mod:`.worker`); :mod:`.randprog`
makes random well-sized programs for the property tests and the solver benchmark.
"""
from __future__ import annotations

from flamefuse.cluster.baselines import megiddo, stream, unfused
from flamefuse.cluster.clusters import Clustering, violations
from flamefuse.cluster.dot import to_dot
from flamefuse.cluster.execute import compile_program, evaluate
from flamefuse.cluster.graph import Graph, build
from flamefuse.cluster.parse import parse_file, parse_text
from flamefuse.cluster.program import Binding, Builder, Program
from flamefuse.cluster.sizes import Sizes, infer
from flamefuse.cluster.solve import solve as _solve

METHODS = ("ilp", "unfused", "megiddo", "stream")


def cluster(program: Program, method: str = "ilp", solver: str = "cpsat") -> Clustering:
    """Cluster ``program``: the ILP optimum (``method="ilp"``) or a baseline."""
    g = build(program)
    if method == "ilp":
        return _solve(g, solver)
    if method == "megiddo":
        return megiddo(g, solver)
    return {"unfused": unfused, "stream": stream}[method](g)


__all__ = ["Binding", "Builder", "Clustering", "Graph", "METHODS", "Program", "Sizes",
           "build", "cluster", "compile_program", "evaluate", "infer", "megiddo",
           "parse_file", "parse_text", "stream", "to_dot", "unfused", "violations"]
