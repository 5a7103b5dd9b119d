"""A third engine: brute force over every 0/1 assignment, written from the rules' text.

For tests and small problems only (exponential in the tasks of an
operation).  It shares nothing with the CP-SAT model or the
python-constraint engine but the task model itself:

* every operation's assignments are enumerated alone and kept when they
  satisfy rules 1-5 (past and future dependencies, comes_from, progress,
  const);
* every combination of the kept assignments is then checked against rules
  6 and 7 with C and U found by interval reasoning: rule 7 leaves each
  region an interval-like set of admissible C (and U) values, and since
  rule 6 only ever asks for C[R] >= i-1 or U[R] <= i+1, the largest
  admissible C and the smallest admissible U satisfy it whenever any do.

``enumerate_brute(problem)`` returns the same sorted ``Invariant`` list as
``enumerate_cpsat``; it fails above ``max_tasks`` tasks in
one operation (a FlameError).
"""
from __future__ import annotations

from itertools import product

from flamefuse.errors import fail
from flamefuse.pme.model import Operation, Problem, inputs, input_states, mentions, pr, with_const_tasks
from flamefuse.search.solutions import Invariant, sort_key


def _d1(op: Operation, x: tuple[int, ...], inp) -> bool:
    """Rule 1's condition: some branch has every task producing it or an earlier state past."""
    return any(all(x[k] for k, t in enumerate(op.tasks) if t.out == s or pr(t.out, s)) for s in input_states(inp))


def _d0(op: Operation, x: tuple[int, ...], inp) -> bool:
    """Rule 2's condition: some branch has every task producing a later state future."""
    return any(all(not x[k] for k, t in enumerate(op.tasks) if pr(s, t.out)) for s in input_states(inp))


def _reads(task, region: str) -> bool:
    return any(s.region == region for inp in inputs(task) for s in input_states(inp))


def _rules_within(op: Operation, x: tuple[int, ...]) -> bool:
    """Rules 1-5 for one operation's assignment ``x`` (const tasks included)."""
    for k, t in enumerate(op.tasks):
        if t.kind == "const":
            readers = [x[j] for j, u in enumerate(op.tasks) if u.kind != "const" and mentions(u, t.out.region)]
            if x[k] != int(any(readers)):
                return False
            continue
        ins = inputs(t)
        if x[k] and not all(_d1(op, x, i) for i in ins):
            return False
        if not x[k] and not all(_d0(op, x, i) for i in ins):
            return False
        if t.kind == "comes_from" and not x[k] and all(_d1(op, x, i) for i in ins):
            return False
    ops = [x[k] for k, t in enumerate(op.tasks) if t.kind == "op_eq"]
    return any(ops) and not all(ops)


def _bounds(problem: Problem, xs) -> tuple[dict, dict] | None:
    """Rule 7: per region the largest admissible C and smallest admissible U, or None."""
    n = len(problem.operations)
    regions = {t.out.region for op in problem.operations for t in op.tasks}
    C, U = {}, {}
    for r in regions:
        c_ok, u_ok = set(range(-1, n)), set(range(0, n + 1))
        for i, (op, x) in enumerate(zip(problem.operations, xs)):
            mine = [x[k] for k, t in enumerate(op.tasks) if t.out.region == r]
            if mine:
                c_ok = {c for c in c_ok if (c >= i) == all(mine)}
                u_ok = {u for u in u_ok if (u <= i) == (not any(mine))}
        if not c_ok or not u_ok:
            return None
        C[r], U[r] = max(c_ok), min(u_ok)
    return C, U


def _fusion_use(problem: Problem, xs, C: dict, U: dict) -> bool:
    """Rule 6, every input counted (the task's own output region included)."""
    for i, (op, x) in enumerate(zip(problem.operations, xs)):
        for k, t in enumerate(op.tasks):
            for inp in inputs(t):
                group = {s.region for s in input_states(inp)}
                if x[k] and not any(C.get(r, len(problem.operations) - 1) >= i - 1 for r in group):
                    return False
                if not x[k] and not any(U.get(r, 0) <= i + 1 for r in group):
                    return False
    return True


def enumerate_brute(problem: Problem, max_tasks: int = 14) -> list[Invariant]:
    """All distinct fused invariants by exhaustive enumeration (const tasks added here)."""
    sizes = [len(op.tasks) for op in with_const_tasks(problem).operations]
    return sorted(iterate_brute(problem, max_tasks), key=lambda inv: sort_key(inv, sizes))


def iterate_brute(problem: Problem, max_tasks: int = 14):
    """The fused invariants one at a time, in enumeration order (each once)."""
    problem = with_const_tasks(problem)
    per_op = []
    for op in problem.operations:
        if len(op.tasks) > max_tasks:
            fail(f"operation {op.name!r} has {len(op.tasks)} tasks: too many for the brute-force engine "
                 f"(at most {max_tasks})", file=problem.source, hint="use --engine cpsat")
        per_op.append([x for x in product((0, 1), repeat=len(op.tasks)) if _rules_within(op, x)])
    for xs in product(*per_op):
        bounds = _bounds(problem, xs)
        if bounds is not None and _fusion_use(problem, xs, *bounds):
            yield Invariant(tuple(tuple(k for k, v in enumerate(x) if v) for x in xs))
