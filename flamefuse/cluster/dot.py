"""Cluster diagrams in Graphviz DOT (Robinson et al. §1.2 conventions).

:func:`to_dot` returns DOT text: one dotted box per cluster, combinators as
ellipses labelled ``name = kind``, materialised arrays (parameters,
results, arrays crossing clusters) as boxes, fusion-preventing edges dashed
and red, scalar edges with open arrowheads.  :func:`write_png` renders it
with the ``dot`` program and returns False when ``dot`` is not installed.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from flamefuse.cluster.clusters import Clustering


def _q(text: str) -> str:
    return '"' + text.replace('"', r"\"") + '"'


def to_dot(c: Clustering) -> str:
    g = c.graph
    p = g.program
    bs = p.bindings
    where = c.cluster_of()
    contracted = set(c.contracted())
    lines = ["digraph clustering {", "  rankdir=TB;", "  node [fontname=Helvetica];"]
    for x in p.array_params:
        lines.append(f"  {_q('in:' + x)} [label={_q(x)}, shape=box];")
    for k, members in enumerate(c.clusters):
        lines.append(f"  subgraph cluster_{k} {{ style=dotted; label={_q(f'loop {k + 1}')};")
        for i in members:
            lines.append(f"    {_q(g.names[i])} [label={_q(', '.join(bs[i].outputs) + ' = ' + bs[i].kind)}];")
        lines.append("  }")
    for i, b in enumerate(bs):
        for x in b.array_outputs:
            if x not in contracted:
                lines.append(f"  {_q('arr:' + x)} [label={_q(x)}, shape=box];")
                lines.append(f"  {_q(g.names[i])} -> {_q('arr:' + x)};")
        for x in b.arrays:
            if x in p.array_params:
                lines.append(f"  {_q('in:' + x)} -> {_q(g.names[i])};")
    for (a, b), fusible in sorted(g.edges.items()):
        style = [] if fusible else ["style=dashed", "color=red"]
        if not g.arrays[a]:
            style.append("arrowhead=onormal")
        same = where[a] == where[b]
        label = ",".join(sorted(set(bs[a].outputs) & (set(bs[b].arrays) | set(bs[b].scalar_inputs))))
        attrs = ", ".join([f"label={_q(label)}"] + style + ([] if same else ["weight=2"]))
        lines.append(f"  {_q(g.names[a])} -> {_q(g.names[b])} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_png(dot_text: str, path: str | Path) -> bool:
    exe = shutil.which("dot")
    if not exe:
        return False
    subprocess.run([exe, "-Tpng", "-o", str(path)], input=dot_text, text=True, check=True)
    return True
