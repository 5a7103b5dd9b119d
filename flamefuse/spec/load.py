"""Load a YAML spec (or a reference-syntax file) into a validated Problem.

The YAML nodes are read here (each error names its file, line and column); the values go
through the binding functions of :mod:`flamefuse.spec.bind`, which run-time chains call
directly.
"""
from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Mapping
from pathlib import Path

import yaml

from flamefuse.errors import fail
from flamefuse.limits import MAX_BYTES, MAX_DEPTH
from flamefuse.pme.model import Finish, Operand, Operation, Problem
from flamefuse.pme.terms import parse_problem
from flamefuse.pme.validate import validate
from flamefuse.spec import bind
from flamefuse.spec.bind import FINISH, KINDS, PARTITIONS, STRUCTURES
from flamefuse.spec.expr import Where, parse_task
from flamefuse.spec.library import LIBRARY, names

TOP_KEYS = ("name", "description", "operands", "operations", "finish")
OPERAND_KEYS = ("kind", "structure", "partition", "unit", "note")


def load(path: str | Path) -> Problem:
    """A YAML spec (``.yaml``/``.yml``) or a reference-syntax task list (anything else)."""
    path = Path(path)
    text = read_spec_file(path)
    if path.suffix in (".yaml", ".yml"):
        return load_spec_text(text, str(path))
    check_depth(text, str(path))
    try:
        return validate(parse_problem(text, str(path), name=path.stem))
    except RecursionError:
        fail(f"the task list is nested too deeply (more than {MAX_DEPTH} levels)", file=str(path))




def read_spec_file(path: Path) -> str:
    """The text of the spec file ``path``: a regular file of at most MAX_BYTES bytes of UTF-8,
    else a FlameError (never reads more than MAX_BYTES + 1 bytes)."""
    import stat
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            fail(f"cannot read {path}: it is a folder", hint="give the path of a YAML spec or a reference-syntax .txt file")
        if not stat.S_ISREG(st.st_mode):
            fail(f"cannot read {path}: not a regular file (a device, pipe or socket)",
                 hint="give the path of a YAML spec or a reference-syntax .txt file")
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        fail(f"no such file: {path}", hint="give the path of a YAML spec or a reference-syntax .txt file")
    except OSError as err:
        fail(f"cannot read {path}: {err.strerror or err}")
    if len(data) > MAX_BYTES:
        fail(f"{path} is larger than {MAX_BYTES // 1024} KiB: not a spec", file=str(path))
    try:
        return data.decode()
    except UnicodeDecodeError as err:
        fail(f"cannot read {path}: not UTF-8 text ({err.reason} at byte {err.start})")


def check_depth(text: str, file: str | None) -> None:
    """A FlameError (with line and column) where brackets or parentheses nest deeper than MAX_DEPTH."""
    depth, line, col = 0, 1, 0
    for ch in text:
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        elif ch in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                fail(f"brackets nested more than {MAX_DEPTH} deep", file=file, line=line, col=col,
                     hint="a spec's expressions and lists are short; is this the right file?")
        elif ch in ")]}":
            depth = max(0, depth - 1)


def check_name(name: str, *, what: str = "the spec's name", **where) -> str:
    """``name`` when it can name a Python module and function (generated code and output files
    are named after it): an identifier, not a keyword; else a FlameError at ``where``."""
    if not name.isidentifier() or keyword.iskeyword(name):
        why = "a Python keyword" if keyword.iskeyword(name) else "not a Python identifier"
        fail(f"{what} {name!r} is {why}", **where,
             hint="use letters, digits and underscores, not starting with a digit (e.g. spd_inverse)")
    return name


def _where(node, file) -> dict:
    return dict(file=file, line=node.start_mark.line + 1, col=node.start_mark.column + 1)


def _scalar(node, file, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        fail(f"{what} must be a single value, not a {'list' if isinstance(node, yaml.SequenceNode) else 'mapping'}",
             **_where(node, file))
    return node.value


def _mapping(node, file, what: str, allowed: tuple[str, ...] | None = None) -> dict:
    if not isinstance(node, yaml.MappingNode):
        fail(f"{what} must be a mapping (key: value lines)", **_where(node, file))
    out = {}
    for k, v in node.value:
        key = _scalar(k, file, f"a key of {what}")
        if allowed is not None and key not in allowed:
            fail(f"unknown key {key!r} in {what}", **_where(k, file), hint=f"allowed keys: {', '.join(allowed)}")
        if key in out:
            fail(f"key {key!r} appears twice in {what}", **_where(k, file))
        out[key] = (k, v)
    return out


def _choice(node, file, what: str, options: tuple[str, ...]) -> str:
    value = _scalar(node, file, what)
    if value not in options:
        fail(f"{what} is {value!r}", **_where(node, file), hint=f"choose one of: {', '.join(options)}")
    return value


def _operand(name: str, node, file) -> Operand:
    fields = _mapping(node, file, f"operand {name}", OPERAND_KEYS)
    get = lambda key, opts, default: _choice(fields[key][1], file, f"{key} of operand {name}", opts) if key in fields else default
    kind = get("kind", KINDS, "matrix")
    structure = get("structure", STRUCTURES, "general")
    partition = get("partition", PARTITIONS, None)
    unit = "unit" in fields and _choice(fields["unit"][1], file, f"unit of operand {name}", ("true", "false")) == "true"
    return bind.operand(name, kind, structure, partition, unit, at=lambda part: _where(node, file))


def _tasks(seq_node, file, regions, what: str) -> tuple:
    if not isinstance(seq_node, yaml.SequenceNode) or not seq_node.value:
        fail(f"{what}: tasks must be a non-empty list of task strings", **_where(seq_node, file),
             hint="e.g. - op L_TL~ = chol(L_TL)")
    tasks = []
    for item in seq_node.value:
        text = _scalar(item, file, "a task")
        offset = 2 if item.style in ("'", '"') else 1
        tasks.append(parse_task(text, regions, Where(file, item.start_mark.line + 1, item.start_mark.column + offset)))
    return tuple(tasks)


class _Scalars(Mapping):
    """The single values of mapping nodes (key -> node), each read when it is asked for (so
    the binding's checks come in the order of the keys, as they are written)."""

    def __init__(self, nodes: dict, file, what):
        self.nodes, self.file, self.what = nodes, file, what

    def __getitem__(self, key):
        return _scalar(self.nodes[key], self.file, self.what(key))

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return len(self.nodes)


def _library_operation(k: int, fields: dict, file, operands: dict[str, Operand]) -> Operation:
    op_key, op_node = fields["op"]
    op_name = _scalar(op_node, file, "op")
    bound = {key: nodes for key, nodes in fields.items() if key not in ("op", "name", "note")}

    def at(part):
        if part == "op":
            return _where(op_node, file)
        what, key = part
        return _where(bound[key][0 if what == "key" else 1], file)
    binds = _Scalars({key: v for key, (_, v) in bound.items()}, file, lambda key: f"operand {key} of {op_name}")
    op = bind.operation(op_name, binds, operands, k, file, at)
    if "name" in fields:
        op = dataclasses.replace(op, name=_scalar(fields["name"][1], file, "name"))
    return op




def _finish(node, file, operands: dict[str, Operand], ops: list[Operation]) -> tuple[Finish, ...]:
    """``finish:`` steps run once after the fused loop: ``- unpivot_columns: A`` (A := A P after
    a pivoted LU, as getri ends) or ``- upper_solve: {U: A, B: B}`` (B := upper(A)^{-1} B)."""
    if not isinstance(node, yaml.SequenceNode):
        fail("finish must be a list", **_where(node, file),
             hint="e.g. 'finish: [unpivot_columns: A]' or '- upper_solve: {U: A, B: B}'")
    steps = []
    for item in node.value:
        fields = _mapping(item, file, "a finish step", tuple(FINISH))
        if len(fields) != 1:
            fail("a finish step has exactly one of " + ", ".join(FINISH), **_where(item, file))
        (kind, (knode, vnode)), = fields.items()
        formals = FINISH[kind]
        if len(formals) == 1:
            names = (_scalar(vnode, file, kind),)
        else:
            bound = _mapping(vnode, file, kind, formals)
            missing = [f for f in formals if f not in bound]
            if missing:
                fail(f"{kind} needs {', '.join(formals)} bound", **_where(vnode, file))
            names = tuple(_scalar(bound[f][1], file, f"{f} of {kind}") for f in formals)
        steps.append(bind.finish(kind, names, operands, ops,
                                 at=lambda part: _where(knode if part == "key" else vnode, file)))
    return tuple(steps)


def load_spec_text(text: str, file: str | None = None) -> Problem:
    """Parse a YAML spec into a validated Problem (library operations expanded to tasks)."""
    check_depth(text, file)
    try:
        root = yaml.compose(text)
    except RecursionError:
        fail("the YAML is nested too deeply", file=file, hint="a spec nests a few levels: name, operands, operations")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        fail(f"invalid YAML: {getattr(err, 'problem', None) or err}", file=file,
             line=mark.line + 1 if mark else None, col=mark.column + 1 if mark else None)
    if root is None:
        fail("the spec is empty", file=file, hint="a spec needs name, operands and operations")
    top = _mapping(root, file, "the spec", TOP_KEYS)
    for key in ("name", "operations"):
        if key not in top:
            fail(f"the spec has no {key!r}", file=file, line=1, col=1,
                 hint="a spec needs name, operands and operations (see docs/guide.md)")
    name = check_name(_scalar(top["name"][1], file, "name"), **_where(top["name"][1], file))
    description = _scalar(top["description"][1], file, "description") if "description" in top else ""
    operands: dict[str, Operand] = {}
    if "operands" in top:
        for oname, (knode, vnode) in _mapping(top["operands"][1], file, "operands").items():
            bind.operand_name(oname, operands, at=lambda part: _where(knode, file))
            operands[oname] = _operand(oname, vnode, file)
    ops_node = top["operations"][1]
    if not isinstance(ops_node, yaml.SequenceNode) or not ops_node.value:
        fail("operations must be a non-empty list", **_where(ops_node, file),
             hint="each item is '- op: <library operation>' with bindings, or '- name: ..., tasks: [...]'")
    regions = bind.regions(operands)
    ops = []
    for k, node in enumerate(ops_node.value):
        fields = _mapping(node, file, f"operation {k}")
        if "op" in fields and "tasks" in fields:
            fail(f"operation {k} has both 'op' and 'tasks'", **_where(node, file), hint="use one of them")
        if "op" in fields:
            ops.append(_library_operation(k, fields, file, operands))
        elif "tasks" in fields:
            extra = set(fields) - {"name", "tasks", "note"}
            if extra:
                key = sorted(extra)[0]
                fail(f"unknown key {key!r} in operation {k}", **_where(fields[key][0], file),
                     hint="explicit operations take name, tasks and note")
            oname = _scalar(fields["name"][1], file, "name") if "name" in fields else f"op{k}"
            ops.append(Operation(oname, _tasks(fields["tasks"][1], file, regions, f"operation {k}")))
        else:
            fail(f"operation {k} needs 'op: <library operation>' or 'tasks:'", **_where(node, file),
                 hint=f"library operations: {', '.join(names())}")
    finish = _finish(top["finish"][1], file, operands, ops) if "finish" in top else ()
    return bind.problem(name, ops, operands, description, file, finish)


__all__ = ["load", "load_spec_text", "LIBRARY"]
