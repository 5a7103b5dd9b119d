"""The CP-SAT model of rules 1-7 (docs: invariant search), with grouped constraints.

``build(problem)`` returns a :class:`Model`: the CP-SAT model, the task
indicators ``x[i][t]``, the per-region bounds ``C[R]`` / ``U[R]`` and one
Boolean *group literal* per constraint group (rule, operation, task or
region).  Every constraint is enforced by its group literal; ``enumerate``
fixes them all true, ``explain`` passes them as assumptions to find an
unsatisfiable core.

C and U are canonicalised so that solutions correspond one to one with the
``x`` projections: C[R] may not stop just before an operation that has no
task of R (it can always move up to the next operation that has one), and
U[R] may not stop just after one (it can always move down).  Rules 6 and 7
never prefer the excluded values, so no fused invariant is lost.
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.solver import cp_model

from flamefuse.pme.model import AnyOf, Problem, State, Task, inputs, input_states, mentions, pr


@dataclass(frozen=True)
class Group:
    """A named group of constraints: ``rule`` with the operation and task/region it is about."""
    rule: str            # progress | past | future | comes_from | const | use | entail
    op: int
    task: int | None = None
    region: str | None = None


@dataclass
class Model:
    problem: Problem
    cp: cp_model.CpModel
    x: list[list[cp_model.IntVar]]
    C: dict[str, cp_model.IntVar]
    U: dict[str, cp_model.IntVar]
    groups: dict[Group, cp_model.IntVar]


def _touching(problem: Problem, region: str) -> set[int]:
    return {i for i, op in enumerate(problem.operations) if any(t.out.region == region for t in op.tasks)}


def _bound_domain(lo: int, hi: int, excluded: set[int]) -> cp_model.Domain:
    return cp_model.Domain.from_values([v for v in range(lo, hi + 1) if v not in excluded])


class _Builder:
    def __init__(self, problem: Problem):
        self.p = problem
        self.m = cp_model.CpModel()
        self.groups: dict[Group, cp_model.IntVar] = {}
        n = len(problem.operations)
        self.x = [[self.m.new_bool_var(f"x{i}_{t}") for t in range(len(op.tasks))]
                  for i, op in enumerate(problem.operations)]
        regions = {t.out.region for op in problem.operations for t in op.tasks}
        regions |= {s.region for op in problem.operations for t in op.tasks
                    for inp in inputs(t) for s in input_states(inp)}
        self.C, self.U = {}, {}
        for r in sorted(regions):
            touch = _touching(problem, r)
            self.C[r] = self.m.new_int_var_from_domain(
                _bound_domain(-1, n - 1, {p for p in range(-1, n - 1) if p + 1 not in touch}), f"C[{r}]")
            self.U[r] = self.m.new_int_var_from_domain(
                _bound_domain(0, n, {p for p in range(1, n + 1) if p - 1 not in touch}), f"U[{r}]")
        self.true = self.m.new_bool_var("true")
        self.m.add(self.true == 1)

    def group(self, g: Group) -> cp_model.IntVar:
        if g not in self.groups:
            self.groups[g] = self.m.new_bool_var(f"{g.rule}:{g.op}:{g.task}:{g.region}")
        return self.groups[g]

    def conj(self, lits: list) -> cp_model.IntVar:
        """A literal equal to the conjunction of ``lits`` (true when empty)."""
        if not lits:
            return self.true
        if len(lits) == 1:
            return lits[0]
        v = self.m.new_bool_var("")
        self.m.add_bool_and(lits).only_enforce_if(v)
        self.m.add_bool_or([lit.Not() for lit in lits]).only_enforce_if(v.Not())
        return v

    def disj(self, lits: list) -> cp_model.IntVar:
        return self.conj([lit.Not() for lit in lits]).Not()

    def d1(self, i: int, inp) -> cp_model.IntVar:
        """D1: every task producing this state or an earlier one of its region is past."""
        tasks = self.p.operations[i].tasks
        def base(s: State):
            return self.conj([self.x[i][k] for k, t in enumerate(tasks) if t.out == s or pr(t.out, s)])
        return self.disj([base(s) for s in inp.options]) if isinstance(inp, AnyOf) else base(inp)

    def d0(self, i: int, inp) -> cp_model.IntVar:
        """D0: every task producing a later state of its region is future."""
        tasks = self.p.operations[i].tasks
        def base(s: State):
            return self.conj([self.x[i][k].Not() for k, t in enumerate(tasks) if pr(s, t.out)])
        return self.disj([base(s) for s in inp.options]) if isinstance(inp, AnyOf) else base(inp)

    def within(self, i: int) -> None:
        tasks = self.p.operations[i].tasks
        for k, t in enumerate(tasks):
            x = self.x[i][k]
            if t.kind == "const":
                users = [self.x[i][j] for j, u in enumerate(tasks)
                         if u.kind != "const" and mentions(u, t.out.region)]
                self.m.add(x == self.disj(users)).only_enforce_if(self.group(Group("const", i, k)))
                continue
            ins = inputs(t)
            for inp in ins:
                self.m.add_implication(x, self.d1(i, inp)).only_enforce_if(self.group(Group("past", i, k)))
                self.m.add_implication(x.Not(), self.d0(i, inp)).only_enforce_if(self.group(Group("future", i, k)))
            if t.kind == "comes_from":
                self.m.add_implication(self.conj([self.d1(i, inp) for inp in ins]), x).only_enforce_if(
                    self.group(Group("comes_from", i, k)))
        ops = [self.x[i][k] for k, t in enumerate(tasks) if t.kind == "op_eq"]
        g = self.group(Group("progress", i))
        self.m.add_bool_or(ops).only_enforce_if(g)
        self.m.add_bool_or([v.Not() for v in ops]).only_enforce_if(g)

    def bound_ge(self, var, value: int) -> cp_model.IntVar:
        b = self.m.new_bool_var("")
        self.m.add(var >= value).only_enforce_if(b)
        self.m.add(var <= value - 1).only_enforce_if(b.Not())
        return b

    def bound_le(self, var, value: int) -> cp_model.IntVar:
        return self.bound_ge(var, value + 1).Not()

    def fusion(self, i: int) -> None:
        tasks = self.p.operations[i].tasks
        for k, t in enumerate(tasks):
            g = self.group(Group("use", i, k))
            for grp in input_region_groups(t):
                self.m.add_implication(self.x[i][k], self.disj([self.bound_ge(self.C[r], i - 1) for r in grp])).only_enforce_if(g)
                self.m.add_implication(self.x[i][k].Not(), self.disj([self.bound_le(self.U[r], i + 1) for r in grp])).only_enforce_if(g)
        for r in dict.fromkeys(t.out.region for t in tasks):
            mine = [self.x[i][k] for k, t in enumerate(tasks) if t.out.region == r]
            g = self.group(Group("entail", i, region=r))
            self.m.add(self.bound_ge(self.C[r], i) == self.conj(mine)).only_enforce_if(g)
            self.m.add(self.bound_le(self.U[r], i) == self.conj([v.Not() for v in mine])).only_enforce_if(g)


def input_region_groups(task: Task) -> list[tuple[str, ...]]:
    """Rule 6's input regions of a task: one group per input, duplicates merged.

    A base input gives a one-region group; an ``any`` input the group of its
    branches' regions.  Every input counts, inputs on the task's own output
    region included (docs: invariant search, rule 6 as corrected).
    """
    groups = []
    for inp in inputs(task):
        regions = tuple(dict.fromkeys(s.region for s in input_states(inp)))
        if regions not in groups:
            groups.append(regions)
    return groups


def build(problem: Problem) -> Model:
    """The CP-SAT model of rules 1-7 for a problem whose const tasks are already added."""
    b = _Builder(problem)
    for i in range(len(problem.operations)):
        b.within(i)
        b.fusion(i)
    return Model(problem, b.m, b.x, b.C, b.U, b.groups)
