"""``flamefuse loopnest KERNEL``: show how a classic kernel is fused.

Prints the schedule (loops, fused statements, parallel loops and privatised
reductions), the reduction classification, the reason for every cut, and
with ``--source`` the generated Numba module.  ``--exact`` keeps
floating-point summation order (no reassociation, no parallel float sums).
"""
from __future__ import annotations

from flamefuse.errors import fail
from flamefuse.loopnest.compile import describe
from flamefuse.loopnest.codegen import generate
from flamefuse.loopnest.fcg import Loop, schedule
from flamefuse.loopnest.kernels import KERNELS
from flamefuse.loopnest.parallel import plan
from flamefuse.loopnest.reductions import analyse


def run(args) -> int:
    if args.kernel not in KERNELS:
        fail(f"no kernel named {args.kernel!r}", hint=f"choose one of: {', '.join(KERNELS)}")
    build = KERNELS[args.kernel][0]
    an = analyse(build(), reorder_float=not args.exact)
    sched = schedule(an)
    plans = {k: plan(an, node) for k, node in enumerate(sched.roots) if isinstance(node, Loop)}
    print(f"{args.kernel}: {build.__doc__}")
    print(describe(an, sched, plans))
    if args.source:
        print(generate(an, sched, plans))
    return 0


def register(sub) -> None:
    p = sub.add_parser("loopnest", help="show the fused schedule of a classic matrix-vector kernel")
    p.add_argument("kernel", help=f"one of: {', '.join(KERNELS)}")
    p.add_argument("--exact", action="store_true", help="no floating-point reordering")
    p.add_argument("--source", action="store_true", help="print the generated Numba module")
    p.set_defaults(func=run)
