"""Enumerate every fused invariant with CP-SAT."""
from __future__ import annotations

from flamefuse.solver import cp_model

from flamefuse.pme.model import Problem, with_const_tasks
from flamefuse.search.model import build
from flamefuse.search.solutions import Invariant, sort_key


class _Collector(cp_model.CpSolverSolutionCallback):
    def __init__(self, x):
        super().__init__()
        self.x, self.found = x, set()

    def on_solution_callback(self) -> None:
        self.found.add(tuple(tuple(k for k, v in enumerate(row) if self.boolean_value(v))
                             for row in self.x))


def enumerate_cpsat(problem: Problem) -> list[Invariant]:
    """All distinct fused invariants of a problem (const tasks added here), in a fixed order."""
    problem = with_const_tasks(problem)
    model = build(problem)
    for g in model.groups.values():
        model.cp.add(g == 1)
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    cb = _Collector(model.x)
    solver.solve(model.cp, cb)
    sizes = [len(op.tasks) for op in problem.operations]
    return sorted((Invariant(p) for p in cb.found), key=lambda inv: sort_key(inv, sizes))
