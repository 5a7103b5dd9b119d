"""Lone calls straight to LAPACK: a plan per structural key, learnt once, met again at no cost.

A call that runs at the call (:func:`flamefuse.lazy.linalg.when` says ``"now"``: a Cholesky
factorization, a solve of one right-hand side), or a recorded call that a flush finds alone
in its group (a solve with many right-hand sides read right after it), is a group of one
operation, and when that group fuses nothing (:func:`flamefuse.synth.group.lapack_alone`:
a lone ``chol`` is potrf, a lone triangular solve is trtrs) the recorder, the group, the open
chain, the cut search and the ``--explain`` formatting around the LAPACK call are pure
overhead: about 0.1 ms of Python per call, as much as a vector solve at n = 500.

So the first such call of a *structural key* (:func:`key`: the call, its options, the dtype
and every input's shape, strides and writability; never the values) runs the ordinary way,
through the group, and :func:`learn` remembers a :class:`Plan` for the key when that group
ran as one chain of LAPACK calls only (:data:`flamefuse.synth.group.RUNS`), with its
``--explain`` line. A warm call of the key goes straight to the plan
(:func:`flamefuse.lazy.linalg.record` for a call at the call, :func:`lone_key` /
:func:`run_lone` from :func:`flamefuse.synth.run.run_group` for a lone flushed group): the
same copies and the same LAPACK calls the group makes for that key (so the same values, bit
for bit, and the same ``LinAlgError`` text), the result in the group's form (a column-major
buffer, zeros above a factor), the same ``--explain`` line counted. A key whose group ran a
fused kernel, or NumPy's own function, is remembered as None: the group runs it each time.

Plans exist for ``cholesky`` / ``cho_factor`` (lower or upper), ``solve_triangular`` and
``cho_solve``. ``STATS`` counts ``learnt`` plans and ``hits``.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from flamefuse.synth import explain
from flamefuse.synth.fill import copy_lower

PLANS: dict = {}           # key -> Plan, or None (the group runs it)
STATS = Counter()


def key(call_name: str, op: str, options: tuple, values) -> tuple:
    """The structural key of a lone call on NumPy arrays ``values`` (never their contents)."""
    return (call_name, op, options) + tuple(
        (v.dtype.str, v.shape, v.strides, v.flags.writeable) for v in values)


class Plan:
    """What a lone call of one key runs: ``fn(call, values)`` returns the result's buffer as the
    group leaves it; ``call`` and ``view`` (the result's recorded view) are those of the call the
    plan was learnt from (the key fixes the call, its options and the shapes)."""
    __slots__ = ("fn", "line", "call", "view")

    def __init__(self, fn, line: str, call, view):
        self.fn, self.line, self.call, self.view = fn, line, call, view

    def __call__(self, values):
        STATS["hits"] += 1
        out = self.fn(self.call, values)   # (a failure adds no line, as the group's adds none)
        explain.add(self.line)
        return out


def lookup(k: tuple) -> tuple:
    """``(plan, learn)`` for key ``k``: its plan (None when the group must run the call) and
    whether the call is the key's first, to :func:`learn` from once its group has run (the
    group's chains are then cleared, so that only this call's are read)."""
    plan = PLANS.get(k, False)
    if plan is False:
        from flamefuse.synth.group import RUNS
        RUNS.clear()
        return None, True
    return plan, False


def learn(k: tuple, call, values, runs: list, view) -> None:
    """Remember the plan of key ``k`` after its call ran through the group: ``runs`` are the
    group's chains (``(explain line, ran as LAPACK calls only)``, :data:`group.RUNS`; None: as
    LAPACK calls only while its kernel is compiled in the background, so nothing is learnt)."""
    if any(r[1] is None for r in runs):     # ran as LAPACK calls while its kernel compiles in the
        return                              # background: nothing learnt, the next call asks again
    fn = _FORMS.get(call.op)
    if fn is None or len(runs) != 1 or not runs[0][1]:
        PLANS[k] = None
        return
    PLANS[k] = Plan(fn, runs[0][0], call, view)
    STATS["learnt"] += 1


def lone_key(op) -> tuple:
    """(the key, the NumPy views of the inputs) of a recorded ``("linalg", Call, ...)`` operation
    flushed alone, or (None, None) for a call that has no plan form or an input not computed."""
    call = op.name
    if call.op not in _FORMS:
        return None, None
    values = []
    for base, view in op.ins:
        flat = base.data
        if flat is None:
            return None, None
        values.append(np.ndarray(view.shape, flat.dtype, buffer=flat, offset=view.offset * flat.itemsize,
                                 strides=tuple(s * flat.itemsize for s in view.strides)))
    return key(call.name, call.op, (call.lower, call.trans, call.upper), values), values


def run_lone(plan: Plan, op, values, later) -> None:
    """Run a flushed lone call's plan and hand its result to the output base (when anyone can
    still see it, as :meth:`flamefuse.synth.group.Group.finish` does)."""
    from flamefuse.synth.group import _flat
    arr = plan(values)
    base = op.out[0]
    if base.live or id(base) in later:
        base.data = _flat(arr)


_FUNCS: dict = {}


def _lapack(name: str, dtype):
    """SciPy's LAPACK routine, imported at the first plan run (lazy.linalg imports this module
    in every fused script: importing scipy.linalg there cost every warm run 0.15-0.45 s)."""
    f = _FUNCS.get((name, dtype))
    if f is None:
        from scipy.linalg import lapack
        f = _FUNCS[(name, dtype)] = lapack.get_lapack_funcs((name,), dtype=dtype)[0]
    return f


def _info(name, info, spd=False):
    if info > 0:
        from flamefuse.synth.eager import _info as check
        check(name, info, spd=spd)


def cholesky(call, values):
    """The group's lone ``chol`` of an outside matrix (:func:`flamefuse.synth.translate._chol_input`):
    its lower triangle (of its transpose for an upper factor) copied into a pool buffer, potrf
    with ``clean=1`` (SciPy's wrapper zeroes the strict upper triangle in C: about 18 us at
    n = 500 against 40-100 us for :func:`fill_upper`). Returns the Fortran-ordered lower factor."""
    from flamefuse.synth.group import fortran_buffer
    a = values[0]
    src = a.T if call.upper else a
    arr = fortran_buffer(src.shape, src.dtype)
    copy_lower(arr, src)
    c, info = _lapack("potrf", arr.dtype)(arr, lower=1, overwrite_a=1, clean=1)
    _info(call.name, info, spd=True)
    if c is not arr:
        arr[...] = c
    return arr


def _lower(a: np.ndarray, lower: bool) -> tuple[np.ndarray, bool]:
    """(a Fortran-ordered matrix whose lower triangle is the triangle ``lower`` of ``a``, whether
    that triangle is its transpose): ``a``'s own storage where it holds it column-major, as
    :func:`flamefuse.synth.translate._lower_buffer` and ``Group.use_lower`` read it."""
    arr, t = (a, False) if lower else (a.T, True)
    if not arr.flags.f_contiguous or not arr.flags.writeable or not arr.dtype.isnative:
        arr = np.array(arr, order="F")
    return arr, t


def _trtrs(call, lmat, b, trans: int):
    x, info = _lapack("trtrs", lmat.dtype)(lmat, b, lower=1, overwrite_b=1, trans=trans)
    _info(call.name, info)
    if x is not b:
        b[...] = x


def solve_triangular(call, values):
    """A lone ``solve_triangular(a, b)``: trtrs on a's stored triangle and a copy of b (Fortran-ordered,
    as the group's right-hand side)."""
    a, b = values
    lmat, t = _lower(a, call.lower)
    out = np.array(b, order="F")
    _trtrs(call, lmat, out, 1 if t != bool(call.trans) else 0)
    return out


def cho_solve(call, values):
    """A lone ``cho_solve((c, lower), b)``: the two trtrs on c's factor triangle."""
    c, b = values
    lmat, _ = _lower(c, call.lower)
    out = np.array(b, order="F")
    _trtrs(call, lmat, out, 0)
    _trtrs(call, lmat, out, 1)
    return out


_FORMS = {"cholesky": cholesky, "solve_triangular": solve_triangular, "cho_solve": cho_solve}
