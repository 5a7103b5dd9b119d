"""A clustered filter loop's recorded ops as NumPy's own calls: its outputs, or its warnings.

A loop of :mod:`flamefuse.runtime.filters` (selections ``x[m]``, element-wise ops over them,
reductions of them, whole-array maps and folds) reads its inputs and writes only fresh arrays,
so its recorded ops can run as NumPy's own calls (``src[mask]``, the ufunc with the recorded
loop's dtypes, ``ufunc.reduce``, ``mean``, ``size``: :func:`flamefuse.runtime.numpy_program.computed`)
on the inputs' values, in order. Two uses:

* :func:`run` -- the loop *instead of* its kernel, while the kernel's native library is being
  built by the background compiler (:mod:`flamefuse.runtime.compiler`): the outputs the kernel
  would store are NumPy's values (NumPy's bits), the selection counts the later loops need are
  set, NumPy's warnings are issued at the script's lines (each at the line that recorded the op
  whose call gave it: :class:`~flamefuse.runtime.numpy_program.Caught`) and NumPy's errors raised (``min`` of an
  empty selection: deferred to the end of the flush, as the kernel's check defers it). No Numba
  in the script's process. An op it does not know leaves everything as it was and returns False
  (the kernel then compiles inline, as before).
* :func:`warn` -- after the kernel raised a floating-point flag (:mod:`flamefuse.runtime.fpflags`),
  which does not say which op raised it: the ops run again (outputs discarded) and the
  floating-point warnings they give are issued, NumPy's texts in NumPy's order. A form it
  cannot run again (a wrapped view, an op it does not know) names each raised category once
  instead (:func:`flamefuse.runtime.numpy_program.name_raised`).
"""
from __future__ import annotations


import numpy as np

from flamefuse.runtime.numpy_program import Caught, computed, known, name_raised, view_of


class _Unknown(Exception):
    """An op this module does not run."""


def warn(ops, bits: int) -> None:
    """The loop of recorded ``ops`` raised the watched flags ``bits``: NumPy's warnings."""
    caught = Caught(ops)
    try:
        with caught:
            _values(ops, [], caught.op)
    except Exception:  # noqa: BLE001  (any form not run again: the categories are named)
        name_raised(ops, bits)
        return
    caught.issue(lambda w: issubclass(w.category, RuntimeWarning) and "encountered" in str(w.message))


def run(ops, loop, bases, counts: dict, errors: list) -> bool:
    """Run the loop ``loop`` (:class:`flamefuse.runtime.filter_kernel.Loop`) of recorded ``ops``
    as NumPy's calls: each base the kernel would store (``("out", base, size)`` in ``loop.args``)
    gets NumPy's value as its flat data (a selection's base its length as size), ``counts`` the
    lengths of the loop's selection domains, ``errors`` the message of a ``min``/``max`` of an
    empty selection (raised at the end of the flush). Every warning NumPy's calls gave is issued
    at the script's line of its op; an error they raised is raised (after the warnings before it). False,
    and nothing written, when an op is not one this module runs."""
    if not all(op.kind == "select" or op.kind == "sreduce" and op.name in ("mean", "count")
               or known(op.kind, op.name) for op in ops):
        return False
    empty: list = []
    caught = Caught(ops)
    try:
        with caught:
            vals, sizes = _values(ops, empty, caught.op)
    except _Unknown:
        return False
    except BaseException:
        caught.issue()
        raise
    if len(sizes) != len(loop.groups):
        return False                # (selections not one per domain: not this module's form)
    for spec in loop.args:
        if spec[0] != "out":
            continue
        base = bases[spec[1]]
        value = np.asarray(vals[id(base)])
        if value.base is None and value.dtype == base.dtype and value.flags.c_contiguous and value.ndim:
            flat = value.reshape(-1)
        else:
            flat = np.empty(value.size, base.dtype)
            np.copyto(flat.reshape(value.shape), value, casting="unsafe")
        if spec[1] in loop.trim:
            base.size = flat.size
        base.data = flat
    counts.update(zip(loop.groups, sizes.values()))
    errors.extend(empty)
    caught.issue()
    return True


def _values(ops, empty: list, mark) -> tuple[dict, dict]:
    """``(values, sizes)``: each op's NumPy value by its output base's id, and each selection
    mask's (by its base's id, in order of first use) selection length. ``min``/``max`` of an
    empty selection appends NumPy's error text to ``empty`` and gives 0. ``mark(k)`` is called
    before op ``k``'s calls (:meth:`~flamefuse.runtime.numpy_program.Caught.op`)."""
    vals: dict = {}
    sizes: dict = {}

    def val(x):
        b, view = x
        if not hasattr(b, "live"):                   # a scalar: (value, dtype name)
            return np.asarray(b, dtype=view)[()]
        if view is None:                             # a selection: made in this loop, or before
            if id(b) in vals:
                return vals[id(b)]
            if b.data is None:
                raise _Unknown("no values")
            return b.data[:b.size]
        if id(b) in vals:
            v = vals[id(b)]
            if np.shape(v) != view.shape:
                raise _Unknown("a view of a value made in the loop")
            return v
        if b.data is None or view.wrap:
            raise _Unknown("no values")
        return view_of(b.data, view)

    for k, op in enumerate(ops):
        mark(k)
        ins = [val(x) for x in op.ins]
        if op.kind == "select":
            r = ins[0][ins[1]]
            sizes.setdefault(id(op.ins[1][0]), r.size)
        elif op.kind == "sreduce" and op.name == "mean":
            r = np.mean(ins[0])
        elif op.kind == "sreduce" and op.name == "count":
            r = np.size(ins[0])
        elif op.kind in ("sew", "ew", "sreduce", "reduce") and known(op.kind, op.name):
            axis = op.axis if op.kind == "reduce" else None
            try:
                r = computed(op.kind, op.name, op.loop, axis, ins)
            except ValueError as e:     # min/max of nothing: the end of the flush raises it
                if op.kind not in ("reduce", "sreduce") or np.size(ins[0]):
                    raise
                empty.append(str(e))
                r = np.zeros((), np.asarray(ins[0]).dtype)[()]
        else:
            raise _Unknown(op.kind + " " + op.name)
        dtype = getattr(op.out[0], "dtype", None)
        if op.kind != "select" and dtype is not None and np.result_type(r) != dtype:
            # the kernel stores into its output's dtype (a selection's ``astype`` is recorded as
            # a ``copy`` of the source's dtype into an output of the new one): NumPy's cast
            r = np.asarray(r).astype(dtype)
            r = r if r.ndim else r[()]
        vals[id(op.out[0])] = r
    return vals, sizes
