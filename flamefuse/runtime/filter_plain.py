"""A clustered segment's plan as plain values, and back: what the plan cache keeps on disk.

:func:`record` turns a :class:`flamefuse.runtime.filter_program.Plan` into nested tuples of
strings, integers, booleans and None (what :mod:`flamefuse.runtime.plan_cache` stores and its
unpickler reads back); :func:`plan_of` rebuilds the plan, or gives None for a record of another
shape (then the plan is built again). A record is ``(FORMAT, steps, clusters, nodes)``, a step
``(ops, loop, keep)`` with ``loop`` None (an external) or the fields of a
:class:`flamefuse.runtime.filter_kernel.Loop` (its ``trim`` as sorted pairs).
"""
from __future__ import annotations

from flamefuse.runtime.filter_kernel import Loop
from flamefuse.runtime.filter_program import Plan, Step

FORMAT = "filters-1"


def record(plan: Plan) -> tuple:
    """The plan's plain values."""
    steps = []
    for s in plan.steps:
        loop = None
        if s.loop is not None:
            lp = s.loop
            loop = (lp.source, lp.length, tuple(tuple(a) for a in lp.args), tuple(lp.groups),
                    tuple(sorted(lp.trim.items(), key=repr)), tuple(tuple(c) for c in lp.checks),
                    bool(lp.parallel))
        steps.append((tuple(s.ops), loop, tuple(sorted(s.keep))))
    return (FORMAT, tuple(steps), tuple(tuple(c) for c in plan.clusters), plan.nodes)


def plan_of(rec) -> Plan | None:
    """The plan of a record made by :func:`record`, None when ``rec`` is None or not one."""
    if rec is None:
        return None
    try:
        fmt, steps, clusters, nodes = rec
        if fmt != FORMAT:
            return None
        out = []
        for ops, loop, keep in steps:
            if loop is not None:
                source, length, args, groups, trim, checks, parallel = loop
                if not isinstance(source, str) or not isinstance(length, (int, str)):
                    return None
                loop = Loop(source, length, tuple(tuple(a) for a in args), tuple(groups),
                            dict(trim), tuple(tuple(c) for c in checks), bool(parallel))
            out.append(Step(tuple(int(i) for i in ops), loop, frozenset(keep)))
        return Plan(tuple(out), tuple(tuple(c) for c in clusters), int(nodes))
    except (TypeError, ValueError):
        return None
