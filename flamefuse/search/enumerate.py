"""Enumerate every fused invariant with CP-SAT."""
from __future__ import annotations

from flamefuse.solver import cp_model

from flamefuse.pme.model import Problem, with_const_tasks
from flamefuse.search.model import build
from flamefuse.search.solutions import Invariant, sort_key


class _Collector(cp_model.CpSolverSolutionCallback):
    def __init__(self, x, on_found=None):
        super().__init__()
        self.x, self.found, self.on_found = x, set(), on_found

    def on_solution_callback(self) -> None:
        past = tuple(tuple(k for k, v in enumerate(row) if self.boolean_value(v)) for row in self.x)
        if past not in self.found:
            self.found.add(past)
            if self.on_found is not None and self.on_found(Invariant(past)) is False:
                self.stop_search()


def enumerate_cpsat(problem: Problem, on_found=None, time_limit: float | None = None) -> list[Invariant]:
    """All distinct fused invariants of a problem (const tasks added here), in a fixed order.

    ``on_found(invariant)``, when given, is called for each distinct invariant as it is found
    (it stops the search by returning False); ``time_limit`` (seconds) ends the search early.
    Either makes the list what was found until then (see :mod:`flamefuse.search.bounded`)."""
    problem = with_const_tasks(problem)
    model = build(problem)
    for g in model.groups.values():
        model.cp.add(g == 1)
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(time_limit, 0.001)
    cb = _Collector(model.x, on_found)
    solver.solve(model.cp, cb)
    sizes = [len(op.tasks) for op in problem.operations]
    return sorted((Invariant(p) for p in cb.found), key=lambda inv: sort_key(inv, sizes))
