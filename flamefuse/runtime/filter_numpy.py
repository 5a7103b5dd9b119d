"""NumPy's warnings for a clustered filter loop that raised a floating-point flag.

A loop of :mod:`flamefuse.runtime.filters` (selections ``x[m]``, element-wise ops over them,
reductions of them, whole-array maps and folds) runs as one kernel, so the flags it raised
(:mod:`flamefuse.runtime.fpflags`) do not say which operation raised them. Its outputs are fresh
arrays and its inputs are unchanged, so :func:`warn` runs the loop's recorded ops again as
NumPy's own calls (``src[mask]``, the ufunc with the recorded loop's dtypes, ``ufunc.reduce``,
``mean``) on the inputs' values and issues the floating-point warnings they give, NumPy's texts
in NumPy's order, at the script's line. A form it cannot run again (a wrapped view, an op it
does not know) names each raised category once instead
(:func:`flamefuse.runtime.numpy_program.name_raised`).
"""
from __future__ import annotations

import warnings

import numpy as np

from flamefuse.runtime.numpy_program import REDUCERS, name_raised, view_of, warn_from_numpy


class _Unknown(Exception):
    """An op this module does not run again."""


def warn(ops, bits: int) -> None:
    """The loop of recorded ``ops`` raised the watched flags ``bits``: NumPy's warnings."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _run(ops)
    except Exception:  # noqa: BLE001  (any form not run again: the categories are named)
        name_raised(ops, bits)
        return
    fp = [w for w in caught if issubclass(w.category, RuntimeWarning) and "encountered" in str(w.message)]

    def again():
        for w in fp:
            warnings.warn(w.message, w.category, stacklevel=1)
    warn_from_numpy(again)


def _run(ops) -> None:
    vals: dict = {}

    def val(x):
        b, view = x
        if not hasattr(b, "live"):                   # a scalar: (value, dtype name)
            return np.asarray(b, dtype=view)[()]
        if view is None:                             # a selection made in this loop
            return vals[id(b)]
        if id(b) in vals:
            v = vals[id(b)]
            if np.shape(v) != view.shape:
                raise _Unknown("a view of a value made in the loop")
            return v
        if b.data is None or view.wrap:
            raise _Unknown("no values")
        return view_of(b.data, view)

    for op in ops:
        ins = [val(x) for x in op.ins]
        if op.kind == "select":
            r = ins[0][ins[1]]
        elif op.kind in ("sew", "ew") and op.name not in ("copy", "where") and hasattr(np, op.name) \
                and isinstance(getattr(np, op.name), np.ufunc):
            ufunc = getattr(np, op.name)
            try:
                r = ufunc(*ins, signature=tuple(op.loop))
            except TypeError:
                r = ufunc(*ins)
        elif op.kind in ("sreduce", "reduce") and op.name in REDUCERS:
            r = REDUCERS[op.name].reduce(ins[0], axis=op.axis if op.kind == "reduce" else None)
        elif op.kind == "sreduce" and op.name == "mean":
            r = np.mean(ins[0])
        elif op.kind == "sreduce" and op.name == "count":
            r = np.size(ins[0])
        elif op.kind in ("sew", "ew") and op.name == "copy":
            r = np.asarray(ins[0]).astype(op.loop[-1])
        else:
            raise _Unknown(op.kind + " " + op.name)
        vals[id(op.out[0])] = r
