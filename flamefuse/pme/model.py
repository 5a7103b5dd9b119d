"""Immutable values of the task model: states, expression terms, tasks, problems."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

INF = float("inf")


@dataclass(frozen=True)
class Pos:
    """A source position (1-based line and column)."""
    file: str | None
    line: int
    col: int


@dataclass(frozen=True)
class State:
    """A base state of a region: ``hat`` (initial), ``during`` n [tag], ``tilde`` (final)."""
    kind: str            # "hat" | "during" | "tilde"
    region: str
    n: int | None = None
    tag: str | None = None

    @property
    def rank(self) -> float:
        return -INF if self.kind == "hat" else INF if self.kind == "tilde" else self.n


@dataclass(frozen=True)
class AnyOf:
    """``any([s1, ..., sk])``: an input that may be any one of its base states."""
    options: tuple[State, ...]


@dataclass(frozen=True)
class Fn:
    """A function term ``name(arg, ...)`` of an expression."""
    name: str
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class Atom:
    name: str


@dataclass(frozen=True)
class Num:
    value: int | float


@dataclass(frozen=True)
class TermList:
    items: tuple["Expr", ...]


Expr = Union[State, AnyOf, Fn, Atom, Num, TermList]
Input = Union[State, AnyOf]

TASK_KINDS = ("eq", "op_eq", "comes_from", "const")


@dataclass(frozen=True)
class Task:
    """One task: ``kind(out, expr)``; ``const`` tasks have ``expr`` None."""
    kind: str
    out: State
    expr: Expr | None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Operand:
    """A matrix or vector of a spec: how it is stored and partitioned."""
    name: str
    kind: str = "matrix"          # "matrix" | "vector"
    structure: str = "general"    # "lower" | "upper" | "symmetric" | "general"
    partition: str = "2x2"        # "2x2" | "rows" | "columns"
    unit: bool = False            # unit diagonal (triangular operands)


@dataclass(frozen=True)
class Operation:
    """One loop: a name and its tasks in input order."""
    name: str
    tasks: tuple[Task, ...]
    exact: bool = False           # tasks carry exact kernel semantics (library ops)
    note: str = ""
    pivot: bool = False           # LU with partial pivoting (library op lu)
    result: tuple[tuple[str, str], ...] = ()   # (operand written, form: lower | symmetric | full)


@dataclass(frozen=True)
class Finish:
    """A step run once after the fused loop (not fused): ``unpivot_columns`` (A := A P, the
    column interchanges that end getri) or ``upper_solve`` (B := upper(U)^{-1} B)."""
    kind: str
    operands: tuple[str, ...]


@dataclass(frozen=True)
class Problem:
    """An ordered list of operations over shared storage (and the steps after the loop)."""
    name: str
    operations: tuple[Operation, ...]
    operands: tuple[Operand, ...] = ()
    description: str = ""
    source: str | None = None
    finish: tuple[Finish, ...] = ()


def pr(a: State, b: State) -> bool:
    """``a`` precedes ``b``: same region and strictly earlier in hat < during(n) < tilde."""
    return a.region == b.region and a.rank < b.rank


def inputs(task: Task) -> tuple[Input, ...]:
    """Every base state and every ``any`` inside the task's expression, in order."""
    found: list[Input] = []

    def walk(e) -> None:
        if isinstance(e, (State, AnyOf)):
            found.append(e)
        elif isinstance(e, Fn):
            for a in e.args:
                walk(a)
        elif isinstance(e, TermList):
            for a in e.items:
                walk(a)

    if task.expr is not None:
        walk(task.expr)
    return tuple(found)


def input_states(inp: Input) -> tuple[State, ...]:
    return inp.options if isinstance(inp, AnyOf) else (inp,)


def regions_of(problem: Problem) -> tuple[str, ...]:
    """Every region mentioned anywhere, in order of first appearance."""
    seen: dict[str, None] = {}
    for op in problem.operations:
        for t in op.tasks:
            seen.setdefault(t.out.region)
            for inp in inputs(t):
                for s in input_states(inp):
                    seen.setdefault(s.region)
    return tuple(seen)


def pure_inputs(problem: Problem) -> tuple[str, ...]:
    """Regions that no task of any operation writes (rule 5), in order of appearance."""
    written = {t.out.region for op in problem.operations for t in op.tasks}
    return tuple(r for r in regions_of(problem) if r not in written)


def mentions(task: Task, region: str) -> bool:
    return any(s.region == region for inp in inputs(task) for s in input_states(inp))


def with_const_tasks(problem: Problem) -> Problem:
    """Add ``const(hat(R))`` to every operation that mentions a pure input R (rule 5)."""
    pure = pure_inputs(problem)
    ops = []
    for op in problem.operations:
        base = tuple(t for t in op.tasks if t.kind != "const")
        extra = tuple(Task("const", State("hat", r), None) for r in pure
                      if any(mentions(t, r) for t in base))
        ops.append(Operation(op.name, base + extra, op.exact, op.note, op.pivot, op.result))
    return Problem(problem.name, tuple(ops), problem.operands, problem.description, problem.source,
                   problem.finish)
