"""``run_group(ops, later)``: one stage of recorded linear-algebra calls, translated and run
(see :mod:`flamefuse.synth.group`); called by the lazy recorder at a flush. A value is
dropped as soon as the call that reads it last has been translated (:meth:`Group.release`).
A run of products ``Q = Q @ P`` may run as one power product (:mod:`flamefuse.synth.power`)."""
from __future__ import annotations

from flamefuse.synth import power
from flamefuse.synth.group import Group
from flamefuse.synth.translate import translate


def run_group(ops, later: set) -> None:
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
