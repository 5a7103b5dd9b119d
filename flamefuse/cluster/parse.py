"""The ``.comb`` text format for programs in combinator normal form.

One statement per line; ``#`` starts a comment::

    param array xs               # array parameters (one or more names)
    param scalar n               # scalar parameters
    sum1 = fold {} xs            # fold {scalars} array [: summand]
    gts  = filter {} xs : xs > 0 # filter {scalars} array [: predicate]
    ys   = map {sum1} xs : xs / sum1   # map (or mapN) {scalars} arrays... [: expr]
    g    = generate {s} n        # generate {scalars} size-scalar [: expr over i]
    h    = gather {} data idx    # gather {} data indices
    c    = cross {} as bs        # cross {} a b [: expr over a, b]
    {t} zs ws = external {s} xs  # external: {scalar outputs} array outputs
    return ys zs                 # returned names

:func:`parse_text` / :func:`parse_file` return a checked
:class:`~flamefuse.cluster.program.Program`; errors carry file, line and
column.
"""
from __future__ import annotations

import re
from pathlib import Path

from flamefuse.cluster.program import KINDS, Binding, Program, check
from flamefuse.cluster.worker import parse as parse_worker
from flamefuse.errors import fail

TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<sym>[{}=])|(?P<bad>\S))")


def tokens(text: str, start: int = 0):
    """(text, column) pairs, columns 1-based; a stray character raises."""
    out = []
    for m in TOKEN.finditer(text):
        if m.group("bad"):
            return out + [(m.group("bad"), m.start("bad") + 1 + start)]
        kind = "name" if m.group("name") else "sym"
        out.append((m.group(kind), m.start(kind) + 1 + start))
    return out


def parse_file(path: str | Path) -> Program:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        fail(f"cannot read {path}: {err.strerror}")
    return parse_text(text, str(path))


def parse_text(text: str, file: str | None = None) -> Program:
    arrays, scalars, bindings, returns = [], [], [], []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        head, colon, worker = line.partition(":")
        toks = tokens(head)
        where = dict(file=file, line=lineno)
        for tok, col in toks:
            if not (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok) or tok in "{}="):
                fail(f"unexpected character {tok!r}", col=col, **where)
        first = toks[0][0]
        if first == "param":
            _param(toks, arrays, scalars, where)
        elif first == "return":
            if colon:
                fail("unexpected ':' in return", col=len(head) + 1, **where)
            returns.extend(t for t, _ in toks[1:])
        else:
            bindings.append(_binding(toks, worker if colon else None, len(head) + 1,
                                     lineno, where))
    program = check(Program(tuple(arrays), tuple(scalars), tuple(bindings),
                            tuple(returns), file))
    for b in program.bindings:
        if b.kind not in ("gather", "external"):
            parse_worker(b, file, _worker_offset(text, b))
    return program


def _worker_offset(text: str, b: Binding) -> int:
    """Column just after the ':' of ``b``'s line (0 when it has no worker)."""
    line = text.splitlines()[b.line - 1].split("#", 1)[0]
    head, colon, worker = line.partition(":")
    return len(head) + 1 + (len(worker) - len(worker.lstrip())) if colon else 0


def _param(toks, arrays, scalars, where):
    if len(toks) < 3 or toks[1][0] not in ("array", "scalar"):
        col = toks[1][1] if len(toks) > 1 else toks[0][1] + 5
        fail("expected 'param array NAME...' or 'param scalar NAME...'", col=col, **where)
    (arrays if toks[1][0] == "array" else scalars).extend(t for t, _ in toks[2:])


def _braced(toks, i, where):
    """Names inside '{...}' starting at toks[i]; returns (names, next index)."""
    if i >= len(toks) or toks[i][0] != "{":
        col = toks[i][1] if i < len(toks) else toks[-1][1] + len(toks[-1][0])
        fail("expected '{' to start the scalar list (write {} for none)", col=col, **where)
    names = []
    i += 1
    while i < len(toks) and toks[i][0] != "}":
        if toks[i][0] in "{=":
            fail(f"unexpected {toks[i][0]!r} in scalar list", col=toks[i][1], **where)
        names.append(toks[i][0])
        i += 1
    if i == len(toks):
        fail("missing '}'", col=toks[-1][1] + len(toks[-1][0]), **where)
    return tuple(names), i + 1


def _binding(toks, worker, worker_col, lineno, where) -> Binding:
    eq = next((k for k, (t, _) in enumerate(toks) if t == "="), None)
    if eq is None or eq + 1 >= len(toks):
        fail("expected 'NAME = COMBINATOR {scalars} ARGS...'", col=toks[0][1], **where)
    kind_tok, kind_col = toks[eq + 1]
    m = re.fullmatch(r"map(\d*)", kind_tok)
    kind = "map" if m else kind_tok
    if kind not in KINDS:
        fail(f"unknown combinator {kind_tok!r}", col=kind_col,
             hint="one of " + ", ".join(KINDS), **where)
    lhs = toks[:eq]
    scalar_outs = ()
    if lhs and lhs[0][0] == "{":
        if kind != "external":
            fail("only external binds scalar outputs in '{...}'", col=lhs[0][1], **where)
        scalar_outs, k = _braced(lhs, 0, where)
        lhs = lhs[k:]
    outs = tuple(scalar_outs) + tuple(t for t, _ in lhs)
    for t, c in lhs:
        if t in "{}":
            fail(f"unexpected {t!r}", col=c, **where)
    if not outs or (kind != "external" and len(outs) != 1):
        fail(f"{kind} binds exactly one name", col=toks[0][1], **where)
    scalars, k = _braced(toks, eq + 2, where)
    args = []
    for t, c in toks[k:]:
        if t in "{}=":
            fail(f"unexpected {t!r}", col=c, **where)
        args.append(t)
    if m and m.group(1) and int(m.group(1)) != len(args):
        fail(f"{kind_tok} takes {m.group(1)} arrays, got {len(args)}", col=kind_col, **where)
    size = None
    if kind == "generate":
        if len(args) != 1:
            fail("generate takes one size scalar: 'ys = generate {scalars} n'",
                 col=kind_col, **where)
        size, args = args[0], []
    if worker is not None and not worker.strip():
        fail("empty worker expression after ':'", col=worker_col, **where)
    return Binding(kind, outs, tuple(args), scalars, worker.strip() if worker else None,
                   size, tuple(scalar_outs) if kind == "external" else
                   (outs if kind == "fold" else ()), lineno, toks[0][1])
