"""A recorded program run as NumPy would run it: each operation NumPy's own call, in order.

``run(program, buffers, scalars)`` is :func:`flamefuse.runtime.execute.run` without kernels:
it allocates the bases that have no buffer yet (the pool's, :mod:`flamefuse.runtime.pool`),
runs every :class:`~flamefuse.runtime.program.Op` as the NumPy call it was recorded from on
NumPy views of the flat buffers (:func:`ndview`, which other executors use too; a wrapped view,
``np.roll`` read in place, is ``np.roll`` of its unwrapped view), and hands the fresh
temporaries nobody sees back to the pool, as the fused run does. The results, warnings and
errors are NumPy's:

* an element-wise ufunc is called with the recorded loop's dtypes (``signature``; a scalar
  operand is the script's value, converted as NumPy converted it), into the output view;
* ``copy`` is ``np.copyto`` with NumPy's unsafe cast (``target[...] = value``), ``where``
  NumPy's ``where`` cast into the output;
* ``ipow<k>`` / ``hpow<p>`` are the script's ``x ** k`` (NumPy's operator: its fast square
  and square root where NumPy takes them);
* a reduction is the reducing ufunc's ``reduce`` over the recorded axis (None: all), as the
  front end's eager path computes it.

Used while a flush's kernels are compiled in the background (:mod:`flamefuse.runtime.compiler`).
"""
from __future__ import annotations

import numpy as np

from flamefuse.runtime import pool
from flamefuse.runtime.program import Program, Ref, Scalar
from flamefuse.runtime.views import plain

REDUCERS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "any": np.logical_or, "all": np.logical_and}


def ndview(flat: np.ndarray, ref: Ref) -> np.ndarray:
    v, item = ref.view, flat.itemsize
    if v.wrap:
        raise ValueError("a wrapped view (np.roll read in place) has no strided NumPy view")
    if not v.shape:
        return np.ndarray((1,), flat.dtype, buffer=flat, offset=v.offset * item)
    return np.ndarray(v.shape, flat.dtype, buffer=flat, offset=v.offset * item,
                      strides=tuple(s * item for s in v.strides))


def run(program: Program, buffers: list, scalars: list) -> None:
    bases = program.bases
    for i, info in enumerate(bases):
        if buffers[i] is None:
            buffers[i] = pool.take(info.size, info.dtype)
    for op in program.ops:
        _run_op(op, buffers, scalars)
    for i, info in enumerate(bases):
        if info.fresh and info.dead:
            pool.give(buffers[i])
            buffers[i] = None


def _value(x, buffers: list, scalars: list):
    if type(x) is Scalar:
        return scalars[x.index]
    v = x.view
    arr = ndview(buffers[x.base], Ref(x.base, plain(v)) if v.wrap else x)
    for axis, shift in enumerate(v.wrap):
        if shift:           # element i reads the unwrapped view at (i + shift) mod n
            arr = np.roll(arr, -shift, axis=axis)
    return arr


def _run_op(op, buffers: list, scalars: list) -> None:
    out = ndview(buffers[op.out.base], op.out)
    ins = [_value(x, buffers, scalars) for x in op.ins]
    name = op.name
    if op.kind == "reduce":
        np.copyto(out, REDUCERS[name].reduce(ins[0], axis=op.axis), casting="unsafe")
    elif name == "copy":
        np.copyto(out, ins[0], casting="unsafe")
    elif name == "where":
        np.copyto(out, np.where(*ins), casting="unsafe")
    elif name.startswith("ipow"):
        np.copyto(out, ins[0] ** int(name[4:]), casting="unsafe")
    elif name.startswith("hpow"):
        np.copyto(out, ins[0] ** float(name[4:]), casting="unsafe")
    else:
        ufunc = getattr(np, name)
        try:
            ufunc(*ins, out=out, signature=tuple(op.loop), casting="unsafe")
        except TypeError:       # no loop of exactly those dtypes: NumPy's own choice
            np.copyto(out, ufunc(*ins), casting="unsafe")
