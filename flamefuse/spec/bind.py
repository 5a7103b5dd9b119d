"""Binding: the Problem a spec describes, built from plain values.

A spec names operands, library operations with their formal -> operand bindings, and
finish steps. These functions check such values and expand each library operation into
its tasks over the bound operands' regions; the YAML loader (:mod:`.load`) reads a file's
nodes and calls them (its errors then name the file, line and column), and run-time
chains (:mod:`flamefuse.synth.chain`) call them directly, with no YAML text between.

``operand_name(name, declared, at)``, ``operand(name, kind, structure, partition, unit, at)``,
``operation(op_name, binds, operands, k, file, at)``, ``finish(kind, names, operands,
operations, at)`` and ``problem(name, operations, operands, description, source, finish)``
(the validated Problem). ``at(part) -> dict`` gives the place (file, line, col) of the
error about ``part`` (``"op"``, ``("key", formal)``, ``("value", formal)``, ``"node"``);
the default names only the file. Errors raise :class:`flamefuse.errors.FlameError`.
"""
from __future__ import annotations

from typing import Callable, Mapping

from flamefuse.errors import fail
from flamefuse.pme.model import Finish, Operand, Operation, Problem
from flamefuse.pme.validate import validate
from flamefuse.spec.expr import Where, parse_task, parts_of
from flamefuse.spec.library import lookup, names

KINDS = ("matrix", "vector")
STRUCTURES = ("lower", "upper", "symmetric", "general")
PARTITIONS = ("2x2", "rows", "columns")
FINISH = {"unpivot_columns": ("A",), "upper_solve": ("U", "B")}

At = Callable[[object], dict]


def _file_only(file) -> At:
    return lambda part: {"file": file}


def operand_name(name: str, declared, at: At | None = None) -> str:
    """``name`` when it can name an operand: letters and digits, not one of ``declared``
    (names) up to case."""
    at = at or _file_only(None)
    if not name.isidentifier() or "_" in name:
        fail(f"operand name {name!r} must be letters and digits", **at("key"))
    clash = [o for o in declared if o.lower() == name.lower()]
    if clash:
        fail(f"operand names {clash[0]!r} and {name!r} differ only in case", **at("key"))
    return name


def operand(name: str, kind: str = "matrix", structure: str = "general", partition: str | None = None,
            unit: bool = False, at: At | None = None) -> Operand:
    """The operand ``name`` (``partition`` None: 2x2 for a matrix, rows for a vector)."""
    at = at or _file_only(None)
    for what, value, options in (("kind", kind, KINDS), ("structure", structure, STRUCTURES),
                                 ("partition", partition, PARTITIONS + (None,))):
        if value not in options:
            fail(f"{what} of operand {name} is {value!r}", **at("node"),
                 hint=f"choose one of: {', '.join(o for o in options if o)}")
    if partition is None:
        partition = "2x2" if kind == "matrix" else "rows"
    if kind == "vector" and partition != "rows":
        fail(f"vector {name} can only be partitioned by rows", **at("node"), hint="use partition: rows")
    if kind == "vector" and structure != "general":
        fail(f"vector {name} cannot have structure {structure!r}", **at("node"))
    return Operand(name, kind, structure, partition, unit)


def regions(operands: dict[str, Operand]) -> dict[str, str]:
    """Region name as written (``A_TL``) -> the model's (``a_tl``), for every declared operand."""
    return {f"{o.name}_{p}": f"{o.name.lower()}_{p.lower()}"
            for o in operands.values() for p in parts_of(o.partition, o.structure)}


def operation(op_name: str, binds: Mapping[str, str], operands: dict[str, Operand], k: int = 0,
              file: str | None = None, at: At | None = None) -> Operation:
    """Library operation ``op_name`` with its formals bound by ``binds`` (formal -> operand
    name, read in order; a formal left out takes its default) as an Operation named
    ``op_name``: its tasks over the bound operands' regions. ``k``: its place among the
    spec's operations (for the messages)."""
    at = at or _file_only(file)
    lib = lookup(op_name)
    if lib is None:
        fail(f"unknown library operation {op_name!r}", **at("op"),
             hint=f"library operations: {', '.join(names())}; or write explicit 'tasks:'")
    bindings = {}
    for key in binds:
        if key not in lib.formals:
            fail(f"operation {op_name} has no operand {key!r}", **at(("key", key)),
                 hint=f"its operands are {', '.join(lib.formals)}")
        actual = binds[key]
        if actual not in operands:
            fail(f"unknown operand {actual!r} bound to {key} of {op_name}", **at(("value", key)),
                 hint=f"declared operands: {', '.join(operands) or '(none)'}")
        o, f = operands[actual], lib.formals[key]
        for attr, allowed in (("kind", f.kinds), ("structure", f.structures), ("partition", f.partitions)):
            if getattr(o, attr) not in allowed:
                fail(f"operand {actual} has {attr} {getattr(o, attr)!r} but {key} of {op_name} needs "
                     f"{' or '.join(allowed)}", **at(("value", key)))
        bindings[key] = actual
    for formal, f in lib.formals.items():
        if formal not in bindings:
            if f.default is None:
                fail(f"operation {op_name} needs operand {formal} bound", **at("op"),
                     hint=f"add '{formal}: <operand>' to operation {k}")
            bindings[formal] = bindings[f.default]
    bound = {f"{formal}_{p}": f"{actual.lower()}_{p.lower()}"
             for formal, actual in bindings.items()
             for p in parts_of(operands[actual].partition, operands[actual].structure)}
    where = Where(file, at("op").get("line"), None)
    tasks = tuple(parse_task(t, bound, where) for t in lib.tasks)
    result = tuple((bindings[formal], form) for formal, form in lib.result)
    return Operation(op_name, tasks, exact=not lib.search_only, note=lib.search_only, pivot=lib.pivot,
                     result=result)


def finish(kind: str, names: tuple[str, ...], operands: dict[str, Operand], operations,
           at: At | None = None) -> Finish:
    """The finish step ``kind`` (a key of FINISH) on the operands ``names``."""
    at = at or _file_only(None)
    if kind not in FINISH or len(names) != len(FINISH[kind]):
        fail(f"a finish step is one of {', '.join(FINISH)} with its operands", **at("key"))
    for nm in names:
        if nm not in operands:
            fail(f"unknown operand {nm!r} in {kind}", **at("value"),
                 hint=f"declared operands: {', '.join(operands) or '(none)'}")
    if kind == "unpivot_columns" and not any(op.pivot for op in operations):
        fail("unpivot_columns needs an LU with partial pivoting (op: lu) among the operations", **at("key"))
    return Finish(kind, tuple(names))


def problem(name: str, operations, operands: dict[str, Operand], description: str = "",
            source: str | None = None, finish_steps=()) -> Problem:
    """The validated Problem (:func:`flamefuse.pme.validate.validate`)."""
    return validate(Problem(name, tuple(operations), tuple(operands.values()), description, source,
                            tuple(finish_steps)))
