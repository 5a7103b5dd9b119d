"""Checks every problem must pass before search, whatever syntax it came from."""
from __future__ import annotations

from flamefuse.errors import fail
from flamefuse.pme.model import Problem
from flamefuse.pme.terms import show


def validate(problem: Problem) -> Problem:
    """Return the problem unchanged, or raise FlameError for the first defect found."""
    if not problem.operations:
        fail("the problem has no operations", file=problem.source)
    for k, op in enumerate(problem.operations):
        first_pos = {}
        for t in op.tasks:
            where = dict(file=t.pos.file, line=t.pos.line, col=t.pos.col) if t.pos else {"file": problem.source}
            if t.out in first_pos:
                prev = first_pos[t.out]
                at = f" (first at line {prev.line})" if prev else ""
                fail(f"operation {k} ({op.name}): two tasks write {show(t.out)}{at}", **where,
                     hint="each state is produced by exactly one task of an operation; "
                          "use during(R, n, tag) for distinct partial results")
            first_pos[t.out] = t.pos
        if not any(t.kind == "op_eq" for t in op.tasks):
            pos = op.tasks[0].pos if op.tasks else None
            fail(f"operation {k} ({op.name}) has no op_eq task",
                 file=pos.file if pos else problem.source, line=pos.line if pos else None,
                 col=pos.col if pos else None,
                 hint="mark the tasks that compute the operation itself on a sub-problem as op_eq "
                      "(at least one must be past and one future for the loop to progress)")
    return problem
