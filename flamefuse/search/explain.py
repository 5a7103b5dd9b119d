"""Why no fused invariant exists: a minimal unsatisfiable core of constraint groups.

``explain(problem)`` solves the grouped model with every group literal as an
assumption, takes CP-SAT's core, shrinks it by deletion to a minimal one, and
returns an :class:`Explanation`: the operations and regions involved and one
sentence per group in the user's terms.
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.solver import cp_model

from flamefuse.pme.model import Problem, with_const_tasks
from flamefuse.search.model import Group, build, input_region_groups
from flamefuse.spec.expr import show_readable


@dataclass(frozen=True)
class Explanation:
    operations: tuple[int, ...]
    regions: tuple[str, ...]
    reasons: tuple[str, ...]
    summary: str


def _feasible(model, groups: list[Group]) -> bool:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    model.cp.clear_assumptions()
    model.cp.add_assumptions([model.groups[g] for g in groups])
    return solver.solve(model.cp) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def minimal_core(problem: Problem) -> list[Group]:
    """A minimal set of constraint groups that cannot hold together (empty if satisfiable)."""
    problem = with_const_tasks(problem)
    model = build(problem)
    everything = list(model.groups)
    if _feasible(model, everything):
        return []
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    model.cp.clear_assumptions()
    model.cp.add_assumptions([model.groups[g] for g in everything])
    solver.solve(model.cp)
    by_index = {model.groups[g].index: g for g in everything}
    core = [by_index[i] for i in solver.sufficient_assumptions_for_infeasibility()] or everything
    for g in list(core):
        trial = [h for h in core if h != g]
        if not _feasible(model, trial):
            core = trial
    return sorted(core, key=lambda g: (g.op, g.rule, g.task or 0, g.region or ""))


def _sentence(problem: Problem, g: Group) -> str:
    op = problem.operations[g.op]
    who = f"operation {g.op} ({op.name})"
    task = op.tasks[g.task] if g.task is not None else None
    text = show_readable(task) if task is not None else ""
    if g.rule == "progress":
        return f"{who} must make progress: one of its op tasks in the past and one in the future"
    if g.rule == "past":
        return f"{who}: if «{text}» is past, the tasks producing its inputs are past"
    if g.rule == "future":
        return f"{who}: if «{text}» is future, the tasks overwriting its inputs are future"
    if g.rule == "comes_from":
        return f"{who}: «{text}» is past exactly when its inputs are computed"
    if g.rule == "const":
        return f"{who}: the pure input {task.out.region} counts as read when a task reading it is past"
    if g.rule == "use":
        regions = " or ".join("/".join(grp) for grp in input_region_groups(task))
        return (f"{who}: «{text}» reads {regions}; in the past it needs {regions} fully computed by "
                f"operation {g.op - 1}, in the future still fully uncomputed in operation {g.op + 1}")
    return (f"{who} writes {g.region}: {g.region} counts as computed (or uncomputed) for later "
            f"(earlier) operations only when all of its tasks there are past (future)")


def _regions(problem: Problem, core: list[Group]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for g in core:
        if g.region:
            found.setdefault(g.region)
        if g.rule == "use":
            for grp in input_region_groups(problem.operations[g.op].tasks[g.task]):
                for r in grp:
                    found.setdefault(r)
    return tuple(found)


def explain(problem: Problem) -> Explanation | None:
    """None when fused invariants exist; otherwise what stops them, in the user's words."""
    full = with_const_tasks(problem)
    core = minimal_core(problem)
    if not core:
        return None
    ops = tuple(sorted({g.op for g in core}))
    regions = _regions(full, core)
    names = [f"{i} ({full.operations[i].name})" for i in ops]
    if len(ops) == 1:
        summary = f"operation {names[0]} has no loop invariant on its own: its tasks cannot be split into past and future"
    else:
        summary = (f"operations {', '.join(names)} cannot share one loop: over region(s) "
                   f"{', '.join(regions) or '-'} their past/future splits contradict each other "
                   f"(typically one must traverse the regions in the opposite direction of the other)")
    starts = [_start(problem, i) for i in ops]
    if len(ops) > 1 and all(starts):
        summary += "; alone, " + "; ".join(
            f"operation {n} always computes {', '.join(s)} first" for n, s in zip(names, starts))
    return Explanation(ops, regions, tuple(_sentence(full, g) for g in core), summary)


def _start(problem: Problem, i: int) -> tuple[str, ...]:
    """Regions whose op task is past in every invariant of operation i on its own."""
    from flamefuse.search.enumerate import enumerate_cpsat
    alone = Problem(problem.name, (problem.operations[i],), problem.operands)
    op = alone.operations[0]
    invs = enumerate_cpsat(alone)
    always = [k for k, t in enumerate(op.tasks) if t.kind == "op_eq" and all(k in inv.past[0] for inv in invs)]
    return tuple(op.tasks[k].out.region for k in always) if invs else ()
