"""A fused invariant as a value: per operation, which of its tasks are past.

What the search (:mod:`flamefuse.search`) finds and the derivation (:mod:`flamefuse.derive`)
turns into a loop body; it lives here, on the model both stages share, so neither imports
the other (:mod:`flamefuse.pipeline` runs one after the other).
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.pme.model import Problem
from flamefuse.pme.terms import show


@dataclass(frozen=True)
class Invariant:
    """One fused invariant: for each operation, the indices of its past tasks (const included)."""
    past: tuple[tuple[int, ...], ...]

    def states(self, problem: Problem) -> list[list[str]]:
        """Per operation, the output states of the past non-const tasks in input order."""
        return [[show(op.tasks[k].out) for k in ks if op.tasks[k].kind != "const"]
                for op, ks in zip(problem.operations, self.past)]
