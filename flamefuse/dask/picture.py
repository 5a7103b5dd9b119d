"""A tile plan drawn as an SVG task graph (no Graphviz needed).

``plan_svg(plan) -> str``: one box per tile task, in columns by depth (the
longest chain of tasks before it, so the number of columns is the critical
path), labelled with its first routine and target tile (``potrf 1,1``), coloured
by routine, an arrow from every task whose output it reads.  Deterministic text.
"""
from __future__ import annotations

from flamefuse.dask.plan import Plan

COLOURS = {"potrf": "#e7b3b3", "trsm": "#b3cde7", "syrk": "#c9e7b3", "gemm": "#e7e3b3", "trtri": "#d9b3e7",
           "trmm": "#b3e7df", "lauum": "#e7ccb3", "triacc": "#cccccc", "copy": "#eeeeee", "lu": "#e7b3d6",
           "ul": "#b3b8e7"}
BOX_W, BOX_H, GAP_X, GAP_Y = 92, 24, 40, 8


def label(task) -> str:
    """The routine that finishes the task (the last step) and the target tile."""
    _, r, c = task.target
    return f"{task.steps[-1].op} {r},{c}"


def depths(plan: Plan) -> list[int]:
    out = []
    for t in plan.tasks:
        before = [out[v[1]] for v in (t.source,) + t.inputs if v[0] == "t"]
        out.append(max(before, default=-1) + 1)
    return out


def plan_svg(plan: Plan, title: str = "") -> str:
    depth = depths(plan)
    rows: dict = {}
    pos = []
    for d in depth:
        pos.append((d, rows.get(d, 0)))
        rows[d] = rows.get(d, 0) + 1
    width = (max(depth, default=0) + 1) * (BOX_W + GAP_X) + GAP_X
    height = max(rows.values(), default=1) * (BOX_H + GAP_Y) + 40
    xy = [(GAP_X + d * (BOX_W + GAP_X), 30 + r * (BOX_H + GAP_Y)) for d, r in pos]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           '<defs><marker id="a" markerWidth="6" markerHeight="6" refX="6" refY="3" orient="auto">'
           '<path d="M0,0 L6,3 L0,6 z" fill="#666"/></marker></defs>',
           f'<text x="{GAP_X}" y="18">{title or plan.kernel}: {len(plan.tasks)} tasks, '
           f'critical path {max(depth, default=-1) + 1} (columns)</text>']
    for i, t in enumerate(plan.tasks):
        x1, y1 = xy[i]
        for v in sorted({v for v in (t.source,) + t.inputs if v[0] == "t"}):
            x0, y0 = xy[v[1]]
            out.append(f'<line x1="{x0 + BOX_W}" y1="{y0 + BOX_H // 2}" x2="{x1}" y2="{y1 + BOX_H // 2}" '
                       'stroke="#999" stroke-width="0.7" marker-end="url(#a)"/>')
    for i, t in enumerate(plan.tasks):
        x, y = xy[i]
        colour = COLOURS.get(t.steps[-1].op, "#ffffff")
        text = "; ".join(dict.fromkeys(s.op for s in t.steps))
        out.append(f'<g><title>{t.text} (iteration {t.iteration}): {text}</title>'
                   f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="4" fill="{colour}" stroke="#555"/>'
                   f'<text x="{x + 6}" y="{y + 16}">{label(t)}</text></g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
