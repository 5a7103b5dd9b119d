"""``run_group(ops, later)``: one stage of recorded linear-algebra calls, translated and run
(see :mod:`flamefuse.synth.group`); called by the lazy recorder at a flush. A value is
dropped as soon as the call that reads it last has been translated (:meth:`Group.release`).
A run of products ``Q = Q @ P`` may run as one power product (:mod:`flamefuse.synth.power`).
A group of one call whose structure was met before and ran as LAPACK calls only runs its plan
(:mod:`flamefuse.synth.direct`) instead."""
from __future__ import annotations

import numpy as np

from flamefuse.runtime.numpy_program import flagged, view_of, warn_categories, warn_from_numpy, watching
from flamefuse.synth import direct, power
from flamefuse.synth.group import RUNS, Group
from flamefuse.synth.translate import translate


def run_group(ops, later: set) -> None:
    """Run a group of recorded calls. A group of products only (``X.T @ X`` as the BLAS syrk,
    ``A @ A @ A`` by squaring, a copy for an identity factor) gives NumPy's ``matmul`` warnings:
    the floating-point flags its BLAS calls and kernels raised are read around it
    (:func:`flamefuse.runtime.numpy_program.watching`), each category named once. (NumPy's
    own linear-algebra functions warn of none: they run under an error state that ignores them.)"""
    if all(op.name.op == "matmul" for op in ops):
        watch, collect = watching()
        with collect:
            _run(ops, later)
        bits = flagged(watch)
        if len(ops) == 1 and watch and (bits or not _finite(ops[0].out)):
            _warn_as_numpy(ops[0])
        elif bits:
            warn_categories(bits, "matmul")
        return
    _run(ops, later)


def _finite(ref) -> bool:
    base, view = ref
    return base.data is None or bool(np.isfinite(view_of(base.data, view)).all())


def _warn_as_numpy(op) -> None:
    """A lone product whose run raised a flag, or whose result is not finite (a later NumPy call
    of the group, a finiteness check, clears the flags a BLAS call raised): NumPy's own
    ``matmul`` of its operands, which the group did not write, for NumPy's warnings."""
    x, y = (view_of(b.data, v) for b, v in op.ins)
    warn_from_numpy(lambda mark: (mark(0), np.matmul(x, y)), [op])    # at the op's line


def _run(ops, later: set) -> None:
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
