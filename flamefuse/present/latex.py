"""A compilable LaTeX document of the fused algorithms in the classic FLAME layout.

``latex_document(problem, solutions)`` takes the problem and, for each
fused invariant, the invariant and its derived loop body (one list of
FLAME-notation update lines per operation, e.g. ``A11 := chol(A11)``, or
a reason why it was not derived) and returns the text of a self-contained
document: partition, loop guard, repartition 2x2 -> 3x3, the updates of
each operation in order, continue with; the invariant of every operation
(its past tasks); the strips.  Only base LaTeX is used (no packages to
fetch): the FLAME partition macros are defined in the preamble.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from flamefuse.derive.dims import classes
from flamefuse.pme.model import AnyOf, Fn, Num, Problem, State, Task
from flamefuse.search.solutions import COMPUTED, PARTIAL, UNCOMPUTED, Invariant, strips

PREAMBLE = r"""\documentclass[10pt]{article}
\usepackage{amsmath}
\usepackage[margin=2cm]{geometry}
% FLAME partitions, self-contained
\newcommand{\FlaTwoByTwo}[4]{\left(\begin{array}{c|c} #1 & #2 \\ \hline #3 & #4 \end{array}\right)}
\newcommand{\FlaTwoByOne}[2]{\left(\begin{array}{c} #1 \\ \hline #2 \end{array}\right)}
\newcommand{\FlaThreeByThreeBR}[9]{\left(\begin{array}{c|cc} #1 & #2 & #3 \\ \hline #4 & #5 & #6 \\ #7 & #8 & #9 \end{array}\right)}
\newcommand{\FlaThreeByThreeTL}[9]{\left(\begin{array}{cc|c} #1 & #2 & #3 \\ #4 & #5 & #6 \\ \hline #7 & #8 & #9 \end{array}\right)}
\newcommand{\FlaThreeByOneB}[3]{\left(\begin{array}{c} #1 \\ \hline #2 \\ #3 \end{array}\right)}
\newcommand{\FlaThreeByOneT}[3]{\left(\begin{array}{c} #1 \\ #2 \\ \hline #3 \end{array}\right)}
\newcommand{\Computed}{\rule{1.2em}{1.2em}}
\newcommand{\Partial}{\framebox[1.2em][l]{\rule[-0.2em]{0.5em}{1.2em}}}
\newcommand{\Uncomputed}{\framebox[1.2em]{\rule{0pt}{0.8em}}}
\newcommand{\Untouched}{\makebox[1.2em]{$\cdot$}}
\setlength{\parindent}{0pt}
"""


@dataclass(frozen=True)
class Solution:
    """One fused invariant with, per operation, its update lines (None: not derived, with a reason)."""
    invariant: Invariant
    bodies: tuple[tuple[str, ...], ...] | None
    reason: str = ""
    direction: str = "TL->BR"     # the corner the computed part grows from -> to (derive.loop.DIRECTIONS)


_PROSE = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\~{}",
          "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#", "$": r"\$"}


def _tex_escape(text: str) -> str:
    """Plain text with every LaTeX special character escaped."""
    return "".join(_PROSE.get(c, c) for c in text)


def block_tex(line: str) -> str:
    """A FLAME-notation update line (``A10 := A10 L00^{-T}``) as math."""
    s = line.replace("\\", " ")
    s = re.sub(r"\b([A-Za-z])(\d)(\d)\b", r"\1_{\2\3}", s)
    s = re.sub(r"\b([A-Za-z])(\d)\b", r"\1_{\2}", s)
    s = re.sub(r"\b([A-Za-z])_?(TL|TR|BL|BR|T|B)\b", r"\1_{\2}", s)
    s = re.sub(r"\b(chol|inv|lu|tril|triu|sylv|unit\\_lower|upper|unit_lower)\(", lambda m: r"\mathrm{" + m.group(1).replace("_", r"\_") + "}(", s)
    s = s.replace(":=", r"\mathrel{:=}").replace("-=", r"\mathrel{-}=").replace("+=", r"\mathrel{+}=")
    s = s.replace("*", r"\,")
    return s


def state_tex(s: State, names: dict[str, str]) -> str:
    label = names.get(s.region, s.region.upper())
    operand, _, part = label.partition("_")
    sub = f"_{{{part}}}" if part else ""
    if s.kind == "during":
        return f"{operand}{sub}^{{({s.n}{s.tag or ''})}}"
    return rf"\{'hat' if s.kind == 'hat' else 'tilde'}{{{operand}}}{sub}"


def expr_tex(e, names: dict[str, str]) -> str:
    """An exact task expression (readable-syntax tree) as math."""
    if isinstance(e, State):
        return state_tex(e, names)
    if isinstance(e, AnyOf):
        return r"\{" + ", ".join(state_tex(s, names) for s in e.options) + r"\}"
    if isinstance(e, Num):
        return str(e.value)
    if isinstance(e, Fn):
        a = [expr_tex(x, names) for x in e.args]
        table = {"add": lambda: f"{a[0]} + {a[1]}", "sub": lambda: f"{a[0]} - ({a[1]})",
                 "mul": lambda: f"{a[0]} {a[1]}", "neg": lambda: f"-({a[0]})",
                 "tr": lambda: f"({a[0]})^T", "lsolve": lambda: f"({a[0]})^{{-1}} {a[1]}",
                 "rsolve": lambda: f"{a[0]} ({a[1]})^{{-1}}"}
        if e.name in table and len(a) == (1 if e.name in ("neg", "tr") else 2):
            return table[e.name]()
        return r"\mathrm{" + _tex_escape(e.name) + "}(" + ", ".join(a) + ")"
    return _tex_escape(str(getattr(e, "name", e)))


def task_tex(t: Task, names: dict[str, str]) -> str:
    if t.kind == "comes_from":
        return state_tex(t.out, names) + r" \leftarrow " + ", ".join(expr_tex(x, names) for x in t.expr.args)
    return state_tex(t.out, names) + " = " + expr_tex(t.expr, names)


def _two(n: str, part: str) -> str:
    """The 2x2 / 2x1 / 1x2 partitioned view of operand n."""
    if part == "2x2":
        return rf"\FlaTwoByTwo{{{n}_{{TL}}}}{{{n}_{{TR}}}}{{{n}_{{BL}}}}{{{n}_{{BR}}}}"
    if part == "rows":
        return rf"\FlaTwoByOne{{{n}_{{T}}}}{{{n}_{{B}}}}"
    return rf"\left({n}_{{L}} \,\middle|\, {n}_{{R}}\right)"


def _array(n: str, row_first: bool, col_first: bool) -> str:
    """The 3x3 view with its lines after the first (else the second) block row and column."""
    cols = "c|cc" if col_first else "cc|c"
    rows = [" & ".join(f"{n}_{{{i}{j}}}" for j in range(3)) for i in range(3)]
    k = 1 if row_first else 2
    body = r" \\ ".join(rows[:k]) + r" \\ \hline " + r" \\ ".join(rows[k:])
    return rf"\left(\begin{{array}}{{{cols}}} {body} \end{{array}}\right)"


def _three(n: str, part: str, row_first: bool, col_first: bool | None = None) -> str:
    """The 3x3 / 3x1 / 1x3 view; lines after the first block row / column (else the second)."""
    col_first = row_first if col_first is None else col_first
    if part == "2x2":
        if row_first != col_first:
            return _array(n, row_first, col_first)
        macro = r"\FlaThreeByThreeBR" if row_first else r"\FlaThreeByThreeTL"
        return macro + "".join(f"{{{n}_{{{i}{j}}}}}" for i in range(3) for j in range(3))
    if part == "rows":
        macro = r"\FlaThreeByOneB" if row_first else r"\FlaThreeByOneT"
        return macro + "".join(f"{{{n}_{{{i}}}}}" for i in range(3))
    bars = (r" \,\middle|\, ", r" \; ") if col_first else (r" \; ", r" \,\middle|\, ")
    return rf"\left({n}_{{0}}{bars[0]}{n}_{{1}}{bars[1]}{n}_{{2}}\right)"


def _algorithm(problem: Problem, bodies: tuple[tuple[str, ...], ...], direction: str = "TL->BR") -> list[str]:
    """The FLAME layout for a traversal (TL->BR: the top-left part grows; BL->TR: rows bottom-up,
    columns left to right, each operand's rows and columns by their dimension class)."""
    start = direction.split("->")[0]
    fwd = (start[0] == "T", start[1] == "L")          # per dimension class: grows from the top / left
    cls = classes(problem)
    ops = [(o.name, o.partition, tuple(fwd[c or 0] for c in cls[o.name])) for o in problem.operands]

    def grow(part, f):
        return {"2x2": ("T" if f[0] else "B") + ("L" if f[1] else "R"), "rows": "T" if f[0] else "B",
                "columns": "L" if f[1] else "R"}[part]

    lines = [r"\begin{tabular}{l}"]
    for n, part, f in ops:
        lines.append(rf"Partition ${n} \rightarrow {_two(n, part)}$ where ${n}_{{{grow(part, f)}}}$ is empty \\")
    # one operand per dimension class: the loop runs until every class is through
    by_class: dict = {}
    for n, part, f in ops:
        by_class.setdefault(cls[n][0] or 0, (n, part, f))
    firsts = list(by_class.values()) or [("A", "2x2", (True, True))]
    cond = r" \vee ".join(f"m({n}_{{{grow(p, f)}}}) < m({n})" for n, p, f in firsts)
    lines.append(rf"\textbf{{while}} ${cond}$ \textbf{{do}} \\")
    lines += [rf"\quad Repartition ${_two(n, part)} \rightarrow {_three(n, part, *f)}$ \\" for n, part, f in ops]
    for op, body in zip(problem.operations, bodies):
        lines.append(rf"\quad \textit{{{_tex_escape(op.name)}}}: \\")
        lines += [rf"\qquad ${block_tex(b)}$ \\" for b in body]
    lines += [rf"\quad Continue with ${_two(n, part)} \leftarrow {_three(n, part, not f[0], not f[1])}$ \\"
              for n, part, f in ops]
    lines += [r"\textbf{endwhile}", r"\end{tabular}"]
    return lines


def _strips(problem: Problem, inv: Invariant, names: dict[str, str]) -> list[str]:
    cell = {COMPUTED: r"\Computed", PARTIAL: r"\Partial", UNCOMPUTED: r"\Uncomputed"}
    ops = problem.operations
    lines = [r"\begin{tabular}{l" + "c" * len(ops) + "rr}",
             "region & " + " & ".join(_tex_escape(f"{i}: {op.name}") for i, op in enumerate(ops)) + r" & $C_R$ & $U_R$ \\ \hline"]
    for s in strips(problem, inv):
        label = names.get(s.region, s.region)
        lines.append(_tex_escape(label) + " & " + " & ".join(cell.get(c, r"\Untouched") for c in s.cells)
                     + f" & {s.C} & {s.U}" + r" \\")
    lines.append(r"\end{tabular}")
    return lines


def latex_document(problem: Problem, solutions: list[Solution], names: dict[str, str]) -> str:
    """The whole document; ``problem`` must have its const tasks added."""
    out = [PREAMBLE, r"\begin{document}", rf"\section*{{{_tex_escape(problem.name)}: fused algorithms}}"]
    if problem.description:
        out.append(_tex_escape(problem.description.strip()) + r"\par\medskip")
    if not solutions:
        out.append(r"No fused loop invariant exists for these operations.")
    for n, sol in enumerate(solutions, 1):
        out.append(rf"\subsection*{{Fused invariant {n}}}")
        for i, (op, ks) in enumerate(zip(problem.operations, sol.invariant.past)):
            past = [task_tex(op.tasks[k], names) for k in ks if op.tasks[k].kind != "const"]
            out.append(rf"Operation {i} (\textit{{{_tex_escape(op.name)}}}), past tasks:")
            out.append(r"\[ \begin{array}{l} " + r" \\ ".join(past) + r" \end{array} \]")
        out.append(r"\paragraph{Strips.}\mbox{}\\[0.5ex]")
        out += _strips(problem, sol.invariant, names)
        out.append(r"\paragraph{Algorithm.}\mbox{}\\[0.5ex]")
        if sol.bodies is None:
            out.append(r"\textit{Not derived: " + _tex_escape(sol.reason) + "}")
        else:
            out += _algorithm(problem, sol.bodies, sol.direction)
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"
