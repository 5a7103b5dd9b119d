"""The reference tool's term syntax: read and write task lists unchanged.

A file holds one list of task lists ending with a period::

    % Cholesky
    [[op_eq(tilde(ltl), chol(hat(ltl))), eq(tilde(lbl), trsm(tilde(ltl), hat(lbl))), ...],
     [...]].

Terms are atoms (``ltl``, ``'quoted'``), numbers, lists ``[a, b]`` and
compound terms ``f(a, b)``; ``%`` starts a comment to the end of the line.
As in the reference (Prolog), an unquoted name starting with an upper-case
letter or ``_`` is a variable; task lists must be ground, so one is an input
error (``'X'`` quoted is an atom).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from flamefuse.errors import fail
from flamefuse.pme.model import (AnyOf, Atom, Expr, Fn, Num, Operation, Pos,
                                 Problem, State, Task, TermList)

_TOKEN = re.compile(r"""
    (?P<ws>\s+|%[^\n]*)
  | (?P<num>-?\d+(?:\.\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quoted>'(?:[^'\\]|\\.)*')
  | (?P<punct>[()\[\],.])
""", re.VERBOSE)


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: Pos


def _tokens(text: str, file: str | None) -> list[_Tok]:
    toks, i, line, line_start = [], 0, 1, 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        col = i - line_start + 1
        if not m:
            fail(f"unexpected character {text[i]!r}", file=file, line=line, col=col,
                 hint="terms are atoms, numbers, lists [a, b] and f(a, b); '%' starts a comment")
        kind = m.lastgroup
        if kind != "ws":
            toks.append(_Tok(kind, m.group(), Pos(file, line, col)))
        nl = m.group().count("\n")
        if nl:
            line += nl
            line_start = i + m.group().rfind("\n") + 1
        i = m.end()
    toks.append(_Tok("eof", "", Pos(file, line, i - line_start + 1)))
    return toks


@dataclass(frozen=True)
class _Raw:
    """A parsed term before states are recognised: functor/atom/number/list."""
    kind: str                 # "fn" | "atom" | "num" | "list"
    value: object
    args: tuple = ()
    pos: Pos | None = None


class _Parser:
    def __init__(self, toks: list[_Tok]):
        self.toks, self.i = toks, 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self, text: str | None = None) -> _Tok:
        tok = self.peek()
        if text is not None and tok.text != text:
            shown = tok.text or "end of file"
            fail(f"expected {text!r} but found {shown!r}", file=tok.pos.file,
                 line=tok.pos.line, col=tok.pos.col)
        self.i += 1
        return tok

    def term(self) -> _Raw:
        tok = self.peek()
        if tok.text == "[":
            self.take("[")
            items = self.sequence("]")
            return _Raw("list", None, tuple(items), tok.pos)
        if tok.kind == "num":
            self.take()
            return _Raw("num", float(tok.text) if "." in tok.text else int(tok.text), (), tok.pos)
        if tok.kind == "name" and (tok.text[0].isupper() or tok.text[0] == "_"):
            fail(f"free variable {tok.text!r}: the reference syntax reads a name starting with an "
                 f"upper-case letter or '_' as a variable, and task lists must be ground",
                 file=tok.pos.file, line=tok.pos.line, col=tok.pos.col,
                 hint=f"write the name in lower case ({tok.text.lower().lstrip('_') or 'x'}) or quote it ('{tok.text}')")
        if tok.kind in ("name", "quoted"):
            self.take()
            name = tok.text[1:-1] if tok.kind == "quoted" else tok.text
            if self.peek().text == "(":
                self.take("(")
                return _Raw("fn", name, tuple(self.sequence(")")), tok.pos)
            return _Raw("atom", name, (), tok.pos)
        shown = tok.text or "end of file"
        fail(f"expected a term but found {shown!r}", file=tok.pos.file, line=tok.pos.line,
             col=tok.pos.col)

    def sequence(self, close: str) -> list[_Raw]:
        items: list[_Raw] = []
        if self.peek().text == close:
            self.take(close)
            return items
        while True:
            items.append(self.term())
            if self.peek().text == ",":
                self.take(",")
                continue
            if self.peek().text != close:
                tok = self.peek()
                fail(f"expected ',' or {close!r} but found {tok.text or 'end of file'!r}", file=tok.pos.file,
                     line=tok.pos.line, col=tok.pos.col)
            self.take(close)
            return items


STATE_FORMS = "hat(R), tilde(R), during(R, N), during(R, N, Tag) or any([S1, ...])"


def _bad_state(raw: _Raw, why: str):
    fail(f"unknown state form {show_raw(raw)}: {why}", file=raw.pos.file, line=raw.pos.line,
         col=raw.pos.col, hint=f"states are {STATE_FORMS}")


def _to_state(raw: _Raw) -> State:
    name, args = raw.value, raw.args
    if any(a.kind != "atom" and not (i == 1 and a.kind == "num") for i, a in enumerate(args)):
        _bad_state(raw, "region and tag must be names, the step a natural number")
    if name in ("hat", "tilde") and len(args) == 1:
        return State(name, args[0].value)
    if name == "during" and len(args) in (2, 3):
        n = args[1].value
        if not isinstance(n, int) or n < 0:
            _bad_state(raw, "the step of during must be a natural number")
        return State("during", args[0].value, n, args[2].value if len(args) == 3 else None)
    _bad_state(raw, f"{name} does not take {len(args)} argument(s)")


def _to_expr(raw: _Raw) -> Expr:
    if raw.kind == "num":
        return Num(raw.value)
    if raw.kind == "atom":
        return Atom(raw.value)
    if raw.kind == "list":
        return TermList(tuple(_to_expr(a) for a in raw.args))
    if raw.value in ("hat", "tilde", "during"):
        return _to_state(raw)
    if raw.value == "any":
        if len(raw.args) != 1 or raw.args[0].kind != "list":
            _bad_state(raw, "any takes one list of states")
        if not raw.args[0].args:
            fail("empty any([]): an input must be at least one state", file=raw.pos.file,
                 line=raw.pos.line, col=raw.pos.col, hint="list the states the task may read")
        opts = []
        for a in raw.args[0].args:
            if a.kind != "fn" or a.value not in ("hat", "tilde", "during"):
                _bad_state(a, "inside any only base states are allowed")
            opts.append(_to_state(a))
        return AnyOf(tuple(opts))
    return Fn(raw.value, tuple(_to_expr(a) for a in raw.args))


TASK_FORMS = "op_eq(State, Expr), eq(State, Expr) or comes_from(State, Expr)"


def _to_task(raw: _Raw) -> Task:
    if raw.kind != "fn" or raw.value not in ("eq", "op_eq", "comes_from") or len(raw.args) != 2:
        where = dict(file=raw.pos.file, line=raw.pos.line, col=raw.pos.col)
        if raw.kind == "fn" and raw.value == "const":
            fail("const tasks are added automatically and may not be written", **where,
                 hint="remove it: pure inputs get const(hat(R)) by themselves")
        fail(f"expected a task but found {show_raw(raw)}", **where, hint=f"tasks are {TASK_FORMS}")
    out_raw = raw.args[0]
    if out_raw.kind == "fn" and out_raw.value == "any":
        fail("any(...) cannot be an output: a task computes exactly one base state",
             file=out_raw.pos.file, line=out_raw.pos.line, col=out_raw.pos.col,
             hint="write one task per possible output state")
    if out_raw.kind != "fn" or out_raw.value not in ("hat", "tilde", "during"):
        _bad_state(out_raw, "the output of a task must be a base state")
    return Task(raw.value, _to_state(out_raw), _to_expr(raw.args[1]), out_raw.pos)


def parse_problem(text: str, file: str | None = None, name: str = "problem") -> Problem:
    """Parse a reference-syntax file: a list of task lists, one per operation, then '.'."""
    toks = _tokens(text, file)
    p = _Parser(toks)
    top = p.term()
    p.take(".")
    if p.peek().kind != "eof":
        tok = p.peek()
        fail(f"unexpected {tok.text!r} after the final period", file=file, line=tok.pos.line,
             col=tok.pos.col, hint="a file holds exactly one list of task lists")
    if top.kind != "list" or not top.args:
        fail("expected a non-empty list of task lists", file=file, line=top.pos.line,
             col=top.pos.col, hint="write [[task, ...], [task, ...]].")
    ops = []
    for k, op_raw in enumerate(top.args):
        if op_raw.kind != "list":
            fail(f"operation {k} must be a list of tasks", file=file, line=op_raw.pos.line,
                 col=op_raw.pos.col)
        ops.append(Operation(f"op{k}", tuple(_to_task(t) for t in op_raw.args)))
    return Problem(name, tuple(ops), source=file)


def show_raw(raw: _Raw) -> str:
    if raw.kind == "list":
        return "[" + ",".join(show_raw(a) for a in raw.args) + "]"
    if raw.kind == "fn":
        return f"{raw.value}(" + ",".join(show_raw(a) for a in raw.args) + ")"
    return str(raw.value)


def show(e) -> str:
    """Write a state, expression, task or problem in the reference term syntax (no spaces)."""
    if isinstance(e, State):
        if e.kind == "during":
            return f"during({e.region},{e.n}" + (f",{e.tag})" if e.tag is not None else ")")
        return f"{e.kind}({e.region})"
    if isinstance(e, AnyOf):
        return "any([" + ",".join(show(s) for s in e.options) + "])"
    if isinstance(e, Fn):
        return f"{e.name}(" + ",".join(show(a) for a in e.args) + ")"
    if isinstance(e, TermList):
        return "[" + ",".join(show(a) for a in e.items) + "]"
    if isinstance(e, Atom):
        return e.name if re.fullmatch(r"[a-z][A-Za-z0-9_]*", e.name) else f"'{e.name}'"
    if isinstance(e, Num):
        return str(e.value)
    if isinstance(e, Task):
        return f"{e.kind}({show(e.out)})" if e.expr is None else f"{e.kind}({show(e.out)},{show(e.expr)})"
    if isinstance(e, Operation):
        return "[" + ",".join(show(t) for t in e.tasks if t.kind != "const") + "]"
    if isinstance(e, Problem):
        return "[" + ",\n ".join(show(o) for o in e.operations) + "]."
    raise TypeError(f"cannot show {type(e).__name__}")
