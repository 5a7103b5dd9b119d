"""The readable task syntax of YAML specs: parse to task values, and print back.

Grammar (one task per string)::

    task   := [kind] state "=" expr          kind: op | eq (default) | from
    from   := "from" state "=" state ("," state)*     (comes_from: done when its inputs are)
    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "\\" | "/") unary)*       L \\ B = L^{-1} B,   B / L = B L^{-1}
    unary  := "-" unary | post
    post   := atom "'"*                               X' = X^T
    atom   := state | number | name "(" expr ("," expr)* ")" | "(" expr ")"
    state  := Operand_PART [ "~" | "@" N [tag] ]     A_TL (initial), A_TL~ (final),
                                                      A_BR@0 (intermediate 0), A_BL@0a (tagged)

``any(S1, S2, ...)`` is an input that may be any one of its states.  The
parts of an operand depend on its partition: ``TL TR BL BR`` (2x2; a lower
triangle has no TR, an upper none BL), ``T B`` (rows, vectors), ``L R``
(columns).  Region names are ``<operand>_<part>`` in lower case.

Operators become the term functions ``add sub mul neg tr lsolve rsolve``;
named functions (``chol``, ``inv``, ``lu`` ...) keep their names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from flamefuse.errors import fail
from flamefuse.pme.model import AnyOf, Fn, Num, Pos, State, Task

PARTS = {
    ("2x2", "lower"): ("TL", "BL", "BR"),
    ("2x2", "symmetric"): ("TL", "BL", "BR"),
    ("2x2", "upper"): ("TL", "TR", "BR"),
    ("2x2", "general"): ("TL", "TR", "BL", "BR"),
    ("rows", None): ("T", "B"),
    ("columns", None): ("L", "R"),
}

_TOK = re.compile(r"\s*(?:(?P<state>[A-Za-z][A-Za-z0-9]*_[A-Z]{1,2}(?:~|@\d+[a-z]*)?)"
                  r"|(?P<num>\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                  r"|(?P<op>:=|[-+*/\\'(),=~]))")


def parts_of(partition: str, structure: str) -> tuple[str, ...]:
    return PARTS.get((partition, structure if partition == "2x2" else None), ())


@dataclass(frozen=True)
class Where:
    """Where a task string sits in its file, so errors point at the character."""
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def at(self, offset: int) -> dict:
        col = None if self.col is None else self.col + offset
        return dict(file=self.file, line=self.line, col=col)


class _Parser:
    def __init__(self, text: str, regions: dict[str, str], where: Where):
        self.text, self.regions, self.where = text, regions, where
        self.toks: list[tuple[str, str, int]] = []
        i = 0
        while i < len(text):
            if text[i:].strip() == "":
                break
            m = _TOK.match(text, i)
            if not m:
                j = len(text) - len(text[i:].lstrip())
                fail(f"unexpected character {text[j]!r} in task {text!r}", **where.at(j),
                     hint="see the task syntax in docs/guide.md (operators + - * \\ / ' and f(...))")
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind), m.start(kind)))
            i = m.end()
        self.toks.append(("eof", "", len(text)))
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def take(self, value: str | None = None):
        tok = self.peek()
        if value is not None and tok[1] != value:
            found = tok[1] or "the end"
            fail(f"expected {value!r} but found {found!r} in task {self.text!r}", **self.where.at(tok[2]))
        self.i += 1
        return tok

    def state(self) -> State:
        kind, text, off = self.take()
        if kind != "state":
            fail(f"expected a state such as A_TL, A_TL~ or A_BR@0 but found {text or 'the end'!r}"
                 f" in task {self.text!r}", **self.where.at(off))
        return self.make_state(text, off)

    def make_state(self, text: str, off: int) -> State:
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)_([A-Z]{1,2})(~|@(\d+)([a-z]*))?", text)
        operand, part = m.group(1), m.group(2)
        key = f"{operand}_{part}"
        if key not in self.regions:
            known = sorted(self.regions)
            fail(f"unknown region {key} in task {self.text!r}", **self.where.at(off),
                 hint=f"regions here are {', '.join(known)}" if known else "declare the operand under 'operands'")
        region = self.regions[key]
        if m.group(3) is None:
            return State("hat", region)
        if m.group(3) == "~":
            return State("tilde", region)
        return State("during", region, int(m.group(4)), m.group(5) or None)

    def expr(self):
        left = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            left = Fn("add" if op == "+" else "sub", (left, self.term()))
        return left

    def term(self):
        left = self.unary()
        while self.peek()[1] in ("*", "\\", "/"):
            op = self.take()[1]
            right = self.unary()
            left = Fn({"*": "mul", "\\": "lsolve", "/": "rsolve"}[op], (left, right))
        return left

    def unary(self):
        if self.peek()[1] == "-":
            self.take()
            return Fn("neg", (self.unary(),))
        e = self.atom()
        while self.peek()[1] == "'":
            self.take()
            e = Fn("tr", (e,))
        return e

    def atom(self):
        kind, text, off = self.peek()
        if kind == "state":
            self.take()
            return self.make_state(text, off)
        if kind == "num":
            self.take()
            return Num(float(text) if "." in text else int(text))
        if kind == "name" and self.toks[self.i + 1][1] == "(":
            self.take()
            self.take("(")
            args = [self.expr()]
            while self.peek()[1] == ",":
                self.take(",")
                args.append(self.expr())
            self.take(")")
            if text == "any":
                if not all(isinstance(a, State) for a in args):
                    fail(f"any(...) takes states only, in task {self.text!r}", **self.where.at(off))
                return AnyOf(tuple(args))
            return Fn(text, tuple(args))
        if text == "(":
            self.take()
            e = self.expr()
            self.take(")")
            return e
        if kind in ("name",):
            fail(f"unknown operand or region {text!r} in task {self.text!r}", **self.where.at(off),
                 hint="write regions as Operand_PART, e.g. L_TL, with the operand declared under 'operands'")
        fail(f"expected an expression but found {text or 'the end'!r} in task {self.text!r}",
             **self.where.at(off))


def parse_task(text: str, regions: dict[str, str], where: Where = Where()) -> Task:
    """Parse one task string; ``regions`` maps ``Operand_PART`` to a region name."""
    p = _Parser(text, regions, where)
    kind = "eq"
    if p.peek()[0] == "name" and p.peek()[1] in ("op", "eq", "from"):
        kind = {"op": "op_eq", "eq": "eq", "from": "comes_from"}[p.take()[1]]
    out_off = p.peek()[2]
    if p.peek()[1] == "any":
        fail(f"any(...) cannot be an output, in task {text!r}", **where.at(out_off),
             hint="a task computes exactly one state; write one task per output")
    out = p.state()
    if p.peek()[1] not in ("=", ":="):
        fail(f"expected '=' after the output state in task {text!r}", **where.at(p.peek()[2]),
             hint="write OUTPUT = EXPRESSION, e.g. 'op L_TL~ = chol(L_TL)'")
    p.take()
    if kind == "comes_from":
        args = [p.state()]
        while p.peek()[1] == ",":
            p.take(",")
            args.append(p.state())
        expr = Fn("and", tuple(args))
    else:
        expr = p.expr()
    if p.peek()[0] != "eof":
        fail(f"unexpected {p.peek()[1]!r} in task {text!r}", **where.at(p.peek()[2]))
    return Task(kind, out, expr, Pos(where.file, where.line or 0, (where.col or 1) + out_off))


_PREC = {"add": 1, "sub": 1, "mul": 2, "lsolve": 2, "rsolve": 2, "neg": 3, "tr": 4}


def show_readable(e, names: dict[str, str] | None = None, parent: int = 0) -> str:
    """Print a task or expression in the readable syntax; ``names`` maps regions back."""
    names = names or {}
    if isinstance(e, Task):
        kind = {"op_eq": "op ", "eq": "", "comes_from": "from ", "const": "const "}[e.kind]
        if e.expr is None:
            return kind + show_readable(e.out, names)
        rhs = (", ".join(show_readable(a, names) for a in e.expr.args)
               if e.kind == "comes_from" and isinstance(e.expr, Fn) else show_readable(e.expr, names))
        return f"{kind}{show_readable(e.out, names)} = {rhs}"
    if isinstance(e, State):
        base = names.get(e.region, e.region.upper())
        suffix = {"hat": "", "tilde": "~"}.get(e.kind, f"@{e.n}{e.tag or ''}")
        return base + suffix
    if isinstance(e, AnyOf):
        return "any(" + ", ".join(show_readable(s, names) for s in e.options) + ")"
    if isinstance(e, Num):
        return str(e.value)
    if isinstance(e, Fn) and e.name in _PREC:
        prec = _PREC[e.name]
        if e.name == "neg":
            text = "-" + show_readable(e.args[0], names, prec)
        elif e.name == "tr":
            text = show_readable(e.args[0], names, prec) + "'"
        else:
            sym = {"add": " + ", "sub": " - ", "mul": " * ", "lsolve": " \\ ", "rsolve": " / "}[e.name]
            text = show_readable(e.args[0], names, prec) + sym + show_readable(e.args[1], names, prec + 1)
        return f"({text})" if prec < parent else text
    if isinstance(e, Fn):
        return f"{e.name}(" + ", ".join(show_readable(a, names) for a in e.args) + ")"
    return str(getattr(e, "name", e))
