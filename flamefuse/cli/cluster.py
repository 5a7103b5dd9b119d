"""``flamefuse cluster FILE.comb``: cluster a program and print the result.

Options: ``--json`` (an object with ``clusters`` (lists of bound names, in
execution order; an external is its own cluster), ``objective``, ``loops``,
``contracted``, ``scheme``, ``method``, ``solver``, ``seconds``),
``--baseline unfused|megiddo|stream``, ``--solver cpsat|milp``,
``--dot FILE`` and ``--png FILE`` (cluster diagram; PNG needs Graphviz).
"""
from __future__ import annotations

import json
from pathlib import Path

from flamefuse.cluster import cluster, parse_file
from flamefuse.cluster.dot import to_dot, write_png
from flamefuse.errors import fail


def run(args) -> int:
    program = parse_file(args.file)
    result = cluster(program, args.baseline or "ilp", args.solver)
    if args.dot:
        Path(args.dot).write_text(to_dot(result))
    if args.png and not write_png(to_dot(result), args.png):
        fail("cannot write PNG: Graphviz 'dot' is not installed",
             hint="install graphviz, or use --dot FILE")
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
        return 0
    data = result.as_json()
    print(f"{args.file}: {data['method']} clustering, {len(data['clusters'])} cluster(s), "
          f"{data['loops']} loop(s), objective {data['objective']}")
    print(f"  sizes: {data['scheme']}")
    bs = program.bindings
    for k, members in enumerate(result.clusters, 1):
        what = "external" if bs[members[0]].kind == "external" else "loop"
        print(f"  {k}. {what}: {{{', '.join(o for i in members for o in bs[i].outputs)}}}")
    print(f"  contracted: {', '.join(data['contracted']) or '(none)'}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("cluster", help="cluster a .comb array program with filters (ILP)")
    p.add_argument("file", help="program in the .comb format")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--baseline", choices=("unfused", "megiddo", "stream"),
                   help="print a baseline clustering instead of the optimum")
    p.add_argument("--solver", choices=("cpsat", "milp"), default="cpsat",
                   help="ILP solver: OR-Tools CP-SAT (default) or SciPy HiGHS milp")
    p.add_argument("--dot", metavar="FILE", help="write the cluster diagram as Graphviz DOT")
    p.add_argument("--png", metavar="FILE", help="render the cluster diagram to PNG")
    p.set_defaults(func=run)
