"""``run_group(ops, later)``: one stage of recorded linear-algebra calls, translated and run
(see :mod:`flamefuse.synth.group`); called by the lazy recorder at a flush. A value is
dropped as soon as the call that reads it last has been translated (:meth:`Group.release`)."""
from __future__ import annotations

from flamefuse.synth.group import Group
from flamefuse.synth.translate import translate


def run_group(ops, later: set) -> None:
    g = Group(ops, later)
    for i, op in enumerate(ops):
        translate(g, i, op)
        g.release(i)
    g.finish()
