"""Programs in combinator normal form: the IR, a small builder, and its checks.

A :class:`Program` has array and scalar parameters, an ordered tuple of
:class:`Binding` s (each name defined before use) and the returned names.
Every value is float64: arrays are 1-d, scalars are numbers.

Combinators (``kind``) and what they compute (``w`` is the worker, an
expression in :mod:`flamefuse.cluster.worker`; a missing worker is the
documented default):

* ``fold``     ``s = sum(w(x) for x in xs)``; default ``w = x + scalars``
* ``map``      ``ys[i] = w(a[i], b[i], ...)``; default: sum of its arguments
* ``filter``   ``ys = [x for x in xs if w(x)]``; default ``x > sum(scalars)``
* ``generate`` ``ys[i] = w(i)`` for ``i < size``; default ``i + scalars``
* ``gather``   ``ys[k] = data[int(abs(idx[k])) % len(data)]`` (0 if data empty)
* ``cross``    ``ys[i*len(b)+j] = w(a[i], b[j])``; default ``a + b``
* ``external`` a host function (fusion barrier): each array output is the
  concatenation of the array inputs plus the sum of the scalar inputs, each
  scalar output the sum of every input element and scalar.
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass, field

from flamefuse.cluster.worker import check_workers
from flamefuse.errors import fail

RESERVED = frozenset(keyword.kwlist) | {"min", "max", "abs", "i", "np"}
KINDS = ("fold", "map", "filter", "generate", "gather", "cross", "external")
ARITY = {"fold": 1, "filter": 1, "generate": 0, "gather": 2, "cross": 2}


@dataclass(frozen=True)
class Binding:
    """One combinator application.

    ``outputs`` holds one name except for ``external``; ``scalar_outputs`` is
    the subset of ``outputs`` that are scalars (for ``fold`` its one output).
    ``size`` is the scalar giving a ``generate`` its length.  ``line``/``col``
    locate the binding in its source file (0 when built in Python).
    """
    kind: str
    outputs: tuple[str, ...]
    arrays: tuple[str, ...] = ()
    scalars: tuple[str, ...] = ()
    worker: str | None = None
    size: str | None = None
    scalar_outputs: tuple[str, ...] = ()
    line: int = 0
    col: int = 0

    @property
    def name(self) -> str:
        """The node's name: its first output."""
        return self.outputs[0]

    @property
    def array_outputs(self) -> tuple[str, ...]:
        return tuple(o for o in self.outputs if o not in self.scalar_outputs)

    @property
    def scalar_inputs(self) -> tuple[str, ...]:
        return self.scalars + ((self.size,) if self.size else ())


@dataclass(frozen=True)
class Program:
    array_params: tuple[str, ...]
    scalar_params: tuple[str, ...]
    bindings: tuple[Binding, ...]
    returns: tuple[str, ...]
    file: str | None = None

    def producer(self) -> dict[str, int]:
        """Map each bound name to the index of the binding that defines it."""
        return {o: i for i, b in enumerate(self.bindings) for o in b.outputs}

    def is_array(self, name: str) -> bool:
        if name in self.array_params:
            return True
        if name in self.scalar_params:
            return False
        binding = self.bindings[self.producer()[name]]
        return name not in binding.scalar_outputs


def check(program: Program) -> Program:
    """Check names, kinds and arities; return the program or raise FlameError."""
    arrays = set(program.array_params)
    scalars = set(program.scalar_params)
    seen = set()
    for b in program.bindings:
        for name in b.outputs:
            if name in RESERVED:
                fail(f"{name!r} is reserved and cannot be bound", file=program.file,
                     line=b.line or None, col=b.col or None)
    for name in program.array_params + program.scalar_params:
        if name in RESERVED:
            fail(f"{name!r} is reserved and cannot be a parameter", file=program.file)
        if name in seen:
            fail(f"parameter {name!r} is declared twice", file=program.file)
        seen.add(name)
    for b in program.bindings:
        where = dict(file=program.file, line=b.line or None, col=b.col or None)
        if b.kind not in KINDS:
            fail(f"unknown combinator {b.kind!r}", hint="one of " + ", ".join(KINDS), **where)
        if b.kind in ARITY and len(b.arrays) != ARITY[b.kind]:
            fail(f"{b.kind} {b.name!r} takes {ARITY[b.kind]} array argument(s), "
                 f"got {len(b.arrays)}", **where)
        if b.kind == "map" and not b.arrays:
            fail(f"map {b.name!r} needs at least one array argument", **where)
        if (b.kind == "generate") != (b.size is not None):
            fail(f"{b.kind} {b.name!r}: only generate takes a size scalar", **where)
        if b.worker is not None and b.kind in ("gather", "external"):
            fail(f"{b.kind} {b.name!r} takes no worker expression", **where)
        for a in b.arrays:
            if a not in arrays:
                what = "a scalar, not an array" if a in scalars else "not defined before use"
                fail(f"{b.kind} {b.name!r}: array argument {a!r} is {what}", **where)
        for s in b.scalar_inputs:
            if s not in scalars:
                what = "an array, not a scalar" if s in arrays else "not defined before use"
                fail(f"{b.kind} {b.name!r}: scalar argument {s!r} is {what}", **where)
        for o in b.outputs:
            if o in seen:
                fail(f"name {o!r} is bound twice", **where)
            seen.add(o)
            (scalars if o in b.scalar_outputs else arrays).add(o)
    for r in program.returns:
        if r not in seen:
            fail(f"returned name {r!r} is not defined", file=program.file)
    return program


@dataclass
class Builder:
    """Build a :class:`Program` in Python::

        p = Builder(arrays=["xs"])
        p.fold("sum1", "xs"); p.filter("gts", "xs"); p.fold("sum2", "gts")
        p.map("ys1", "xs", scalars=["sum1"], worker="xs / sum1")
        program = p.returns("ys1").build()
    """
    arrays: list[str] = field(default_factory=list)
    scalars: list[str] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    result: list[str] = field(default_factory=list)

    def add(self, binding: Binding) -> "Builder":
        self.bindings.append(binding)
        return self

    def fold(self, name, xs, scalars=(), worker=None):
        return self.add(Binding("fold", (name,), (xs,), tuple(scalars), worker,
                                scalar_outputs=(name,)))

    def map(self, name, *arrays, scalars=(), worker=None):
        return self.add(Binding("map", (name,), tuple(arrays), tuple(scalars), worker))

    def filter(self, name, xs, scalars=(), worker=None):
        return self.add(Binding("filter", (name,), (xs,), tuple(scalars), worker))

    def generate(self, name, size, scalars=(), worker=None):
        return self.add(Binding("generate", (name,), (), tuple(scalars), worker, size=size))

    def gather(self, name, data, indices):
        return self.add(Binding("gather", (name,), (data, indices)))

    def cross(self, name, a, b, worker=None):
        return self.add(Binding("cross", (name,), (a, b), (), worker))

    def external(self, outputs, arrays=(), scalars=(), scalar_outputs=()):
        return self.add(Binding("external", tuple(outputs), tuple(arrays), tuple(scalars),
                                scalar_outputs=tuple(scalar_outputs)))

    def returns(self, *names) -> "Builder":
        self.result.extend(names)
        return self

    def build(self) -> Program:
        program = check(Program(tuple(self.arrays), tuple(self.scalars),
                                tuple(self.bindings), tuple(self.result)))
        check_workers(program)
        return program
