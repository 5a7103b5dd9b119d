"""Strip pictures as SVG: regions x operations, black / grey / white boxes.

``strips_svg(problem, inv)`` draws one fused solution: a row per region, a
column per operation; computed cells black, partial grey, uncomputed white,
untouched cells dotted; a red line after the column C_R (last operation
leaving the region computed) and a blue line before U_R (first leaving it
uncomputed).  ``conflict_svg(problem, explanation)`` draws the regions and
operations of an unsatisfiable core, the conflicting ones highlighted.
"""
from __future__ import annotations

from html import escape

from flamefuse.pme.model import Problem
from flamefuse.search.solutions import COMPUTED, PARTIAL, UNCOMPUTED, Invariant, strips

CELL_W, CELL_H, LEFT, TOP = 90, 28, 90, 50
FILL = {COMPUTED: "#000000", PARTIAL: "#9a9a9a", UNCOMPUTED: "#ffffff"}


def _frame(width: int, height: int, title: str, body: list[str]) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">')
    return "\n".join([head, f'<rect width="{width}" height="{height}" fill="white"/>',
                      f'<text x="8" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
                      *body, "</svg>"]) + "\n"


def _headers(problem: Problem, rows: list[str], names: dict[str, str]) -> list[str]:
    out = []
    for i, op in enumerate(problem.operations):
        x = LEFT + i * CELL_W + CELL_W / 2
        out.append(f'<text x="{x}" y="{TOP - 8}" text-anchor="middle">{i}: {escape(op.name)}</text>')
    for j, r in enumerate(rows):
        y = TOP + j * CELL_H + CELL_H * 0.65
        out.append(f'<text x="{LEFT - 8}" y="{y}" text-anchor="end">{escape(names.get(r, r))}</text>')
    return out


def strips_svg(problem: Problem, inv: Invariant, title: str, names: dict[str, str] | None = None) -> str:
    """One fused solution's strips (problem with const tasks added)."""
    names = names or {}
    ss = strips(problem, inv)
    n = len(problem.operations)
    body = _headers(problem, [s.region for s in ss], names)
    for j, s in enumerate(ss):
        y = TOP + j * CELL_H
        for i, cell in enumerate(s.cells):
            x = LEFT + i * CELL_W
            if cell in FILL:
                body.append(f'<rect class="{cell}" x="{x + 2}" y="{y + 2}" width="{CELL_W - 4}" '
                            f'height="{CELL_H - 4}" fill="{FILL[cell]}" stroke="black"/>')
            else:
                body.append(f'<rect class="untouched" x="{x + 2}" y="{y + 2}" width="{CELL_W - 4}" '
                            f'height="{CELL_H - 4}" fill="none" stroke="#bbbbbb" stroke-dasharray="3,3"/>')
        cx = LEFT + (s.C + 1) * CELL_W
        ux = LEFT + s.U * CELL_W
        body.append(f'<line class="C" x1="{cx}" y1="{y}" x2="{cx}" y2="{y + CELL_H}" stroke="red" stroke-width="3"/>')
        body.append(f'<line class="U" x1="{ux + 2}" y1="{y}" x2="{ux + 2}" y2="{y + CELL_H}" stroke="blue" '
                    f'stroke-width="3" stroke-dasharray="4,2"/>')
    legend_y = TOP + len(ss) * CELL_H + 20
    body.append(f'<text x="8" y="{legend_y}">black computed, grey partial, white uncomputed; '
                f'red: after C_R, blue: at U_R</text>')
    return _frame(LEFT + n * CELL_W + 20, legend_y + 14, title, body)


def conflict_svg(problem: Problem, operations: tuple[int, ...], regions: tuple[str, ...], title: str,
                 names: dict[str, str] | None = None) -> str:
    """No fused invariant: every region x operation, the conflicting ones outlined in red."""
    names = names or {}
    rows = list(dict.fromkeys(t.out.region for op in problem.operations for t in op.tasks))
    rows += [r for r in regions if r not in rows]
    body = _headers(problem, rows, names)
    for j, r in enumerate(rows):
        for i, op in enumerate(problem.operations):
            touched = any(t.out.region == r for t in op.tasks)
            hot = r in regions and i in operations
            x, y = LEFT + i * CELL_W, TOP + j * CELL_H
            body.append(f'<rect class="{"conflict" if hot else "cell"}" x="{x + 2}" y="{y + 2}" '
                        f'width="{CELL_W - 4}" height="{CELL_H - 4}" fill="{"#ffd0d0" if hot else "white"}" '
                        f'stroke="{"red" if hot else "#bbbbbb"}" stroke-width="{3 if hot else 1}"/>')
            if touched:
                body.append(f'<text x="{x + CELL_W / 2}" y="{y + CELL_H * 0.65}" text-anchor="middle">tasks</text>')
    legend_y = TOP + len(rows) * CELL_H + 20
    body.append(f'<text x="8" y="{legend_y}">no fused invariant: red cells are the regions and operations '
                f'of a minimal conflicting set of constraints</text>')
    return _frame(LEFT + len(problem.operations) * CELL_W + 320, legend_y + 14, title, body)
