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
    forward: bool = True          # TL->BR (else BR->TL)


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
    s = re.sub(r"\b(chol|inv|lu|tril|triu|unit\\_lower|upper|unit_lower)\(", lambda m: r"\mathrm{" + m.group(1).replace("_", r"\_") + "}(", s)
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


def _three(n: str, part: str, line_after_first: bool) -> str:
    """The 3x3 / 3x1 / 1x3 view; the line after the first block row (else the second)."""
    if part == "2x2":
        macro = r"\FlaThreeByThreeBR" if line_after_first else r"\FlaThreeByThreeTL"
        return macro + "".join(f"{{{n}_{{{i}{j}}}}}" for i in range(3) for j in range(3))
    if part == "rows":
        macro = r"\FlaThreeByOneB" if line_after_first else r"\FlaThreeByOneT"
        return macro + "".join(f"{{{n}_{{{i}}}}}" for i in range(3))
    bars = (r" \,\middle|\, ", r" \; ") if line_after_first else (r" \; ", r" \,\middle|\, ")
    return rf"\left({n}_{{0}}{bars[0]}{n}_{{1}}{bars[1]}{n}_{{2}}\right)"


def _algorithm(problem: Problem, bodies: tuple[tuple[str, ...], ...], forward: bool = True) -> list[str]:
    """The FLAME layout; ``forward`` is TL->BR (the top-left part grows), else BR->TL."""
    ops = [(o.name, o.partition) for o in problem.operands]
    grow = {"2x2": "TL" if forward else "BR", "rows": "T" if forward else "B", "columns": "L" if forward else "R"}
    lines = [r"\begin{tabular}{l}"]
    for n, part in ops:
        lines.append(rf"Partition ${n} \rightarrow {_two(n, part)}$ where ${n}_{{{grow[part]}}}$ is empty \\")
    n0, p0 = ops[0] if ops else ("A", "2x2")
    lines.append(rf"\textbf{{while}} $m({n0}_{{{grow[p0]}}}) < m({n0})$ \textbf{{do}} \\")
    lines += [rf"\quad Repartition ${_two(n, part)} \rightarrow {_three(n, part, forward)}$ \\" for n, part in ops]
    for op, body in zip(problem.operations, bodies):
        lines.append(rf"\quad \textit{{{_tex_escape(op.name)}}}: \\")
        lines += [rf"\qquad ${block_tex(b)}$ \\" for b in body]
    lines += [rf"\quad Continue with ${_two(n, part)} \leftarrow {_three(n, part, not forward)}$ \\" for n, part in ops]
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
            out += _algorithm(problem, sol.bodies, sol.forward)
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"
