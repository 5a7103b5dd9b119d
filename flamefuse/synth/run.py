"""``run_group(ops, later)``: one stage of recorded linear-algebra calls, translated and run
(see :mod:`flamefuse.synth.group`); called by the lazy recorder at a flush. A value is
dropped as soon as the call that reads it last has been translated (:meth:`Group.release`).
A run of products ``Q = Q @ P`` may run as one power product (:mod:`flamefuse.synth.power`).
A group of one call whose structure was met before and ran as LAPACK calls only runs its plan
(:mod:`flamefuse.synth.direct`) instead."""
from __future__ import annotations

from flamefuse.synth import direct, power
from flamefuse.synth.group import RUNS, Group
from flamefuse.synth.translate import translate


def run_group(ops, later: set) -> None:
    plan_key = None
    if len(ops) == 1:                  # a lone call: its plan when warm (flamefuse.synth.direct)
        plan_key, values = direct.lone_key(ops[0])
        if plan_key is not None:
            plan, first = direct.lookup(plan_key)
            if plan is not None:
                direct.run_lone(plan, ops[0], values, later)
                return
            if not first:
                plan_key = None
    _run_group(ops, later)
    if plan_key is not None:
        direct.learn(plan_key, ops[0].name, values, RUNS, ops[0].out[1])


def _run_group(ops, later: set) -> None:
    g = Group(ops, later)
    runs, i = power.chains(ops, later), 0
    while i < len(ops):
        j = runs.get(i, i)
        if j > i and power.translate(g, i, j):
            for k in range(i, j + 1):
                g.release(k)
        else:
            translate(g, i, ops[i])
            g.release(i)
            j = i
        i = j + 1
    g.finish()
