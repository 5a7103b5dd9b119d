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
* ``ipow<k>`` / ``hpow<p>`` are ``np.power(x, k)`` (the operator's fast forms, ``x ** 2``,
  ``x ** 0.5`` and ``x ** -1`` of floats, are recorded as ``square``, ``sqrt``, ``reciprocal``);
* a reduction is the reducing ufunc's ``reduce`` over the recorded axis (None: all), as the
  front end's eager path computes it.

Used while a flush's kernels are compiled in the background (:mod:`flamefuse.runtime.compiler`),
and by :func:`warn_like_numpy` for NumPy's warnings of a flush whose kernels raised a
floating-point flag (:mod:`flamefuse.runtime.fpflags`).

Where the warnings are issued: each at the script's line that recorded the operation whose
NumPy call gave it (the op's ``site``, :mod:`flamefuse.runtime.sites`), as under plain NumPy --
two lines that divide by zero in one flush warn twice, each at its line. :class:`Caught` does
it for every re-run here and in :mod:`flamefuse.runtime.filter_numpy`; an operation with no
known line (a product group's, a library call's) warns at the line that made the flush run.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np

from flamefuse.runtime import pool
from flamefuse.runtime.program import Program, Ref, Scalar
from flamefuse.runtime.sites import warn_at
from flamefuse.runtime.views import plain

REDUCERS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "any": np.logical_or, "all": np.logical_and}


def view_of(flat: np.ndarray, view) -> np.ndarray:
    """A NumPy view of flat buffer ``flat`` through a recorded (unwrapped) ``View``."""
    item = flat.itemsize
    return np.ndarray(view.shape, flat.dtype, buffer=flat, offset=view.offset * item,
                      strides=tuple(st * item for st in view.strides))


def ndview(flat: np.ndarray, ref: Ref) -> np.ndarray:
    v, item = ref.view, flat.itemsize
    if v.wrap:
        raise ValueError("a wrapped view (np.roll read in place) has no strided NumPy view")
    if not v.shape:
        return np.ndarray((1,), flat.dtype, buffer=flat, offset=v.offset * item)
    return np.ndarray(v.shape, flat.dtype, buffer=flat, offset=v.offset * item,
                      strides=tuple(s * item for s in v.strides))


def run(program: Program, buffers: list, scalars: list, mark=None) -> None:
    """``mark(k)`` (:meth:`Caught.op`), when given, is called before op ``k``'s calls."""
    bases, ops = program.bases, program.ops
    # a temporary (fresh, dead, no buffer yet) lives from its first operation to its last, as
    # NumPy's own temporaries do: all of a flush's at once (a stencil's hundreds of grids) was
    # fresh memory for each, every page faulted, where NumPy's freed temporaries are reused
    temps = {i for i, info in enumerate(bases) if buffers[i] is None and info.fresh and info.dead}
    last = {}
    for k, op in enumerate(ops):
        for x in (op.out,) + op.ins:
            if type(x) is not Scalar and x.base in temps:
                last[x.base] = k
    ends: dict = {}
    for i, k in last.items():
        ends.setdefault(k, []).append(i)
    for i, info in enumerate(bases):
        if buffers[i] is None and i not in temps:
            buffers[i] = pool.take(info.size, info.dtype)
    for k, op in enumerate(ops):
        for x in (op.out,) + op.ins:
            if type(x) is not Scalar and buffers[x.base] is None:
                info = bases[x.base]
                buffers[x.base] = pool.take(info.size, info.dtype)
        if mark is not None:
            mark(k)
        _run_op(op, buffers, scalars)
        for i in ends.get(k, ()):
            pool.give(buffers[i])
            buffers[i] = None
    for i, info in enumerate(bases):
        if info.fresh and info.dead and buffers[i] is not None:
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
    if op.kind != "reduce" and name == "copy":
        np.copyto(out, ins[0], casting="unsafe")
    elif op.kind == "reduce" or name == "where" or name.startswith(("ipow", "hpow")):
        np.copyto(out, computed(op.kind, name, op.loop, op.axis, ins), casting="unsafe")
    else:
        ufunc = getattr(np, name)
        try:
            ufunc(*ins, out=out, signature=tuple(op.loop), casting="unsafe")
        except TypeError:       # no loop of exactly those dtypes: NumPy's own choice
            np.copyto(out, ufunc(*ins), casting="unsafe")


def known(kind: str, name: str) -> bool:
    """Whether :func:`computed` runs a recorded operation of this kind and name."""
    if kind in ("reduce", "sreduce"):
        return name in REDUCERS
    return name in ("copy", "where") or name.startswith(("ipow", "hpow")) \
        or isinstance(getattr(np, name, None), np.ufunc)


def computed(kind: str, name: str, loop, axis, ins: list):
    """The value NumPy's own call gives for a recorded operation (:func:`known`) on operand
    values ``ins``, in NumPy's dtype (``copy``: the cast to the loop's output dtype): the
    reducing ufunc's ``reduce`` over ``axis``, NumPy's ``where``, the script's ``x ** k``, the
    ufunc with the recorded loop's dtypes (NumPy's own choice where it has no such loop)."""
    if kind in ("reduce", "sreduce"):
        return REDUCERS[name].reduce(ins[0], axis=axis)
    if name == "copy":
        return np.asarray(ins[0]).astype(loop[-1])
    if name == "where":
        return np.where(*ins)
    if name.startswith("ipow"):         # (the operator's fast forms were recorded as theirs:
        return np.power(ins[0], int(name[4:]))      # ``x ** 2`` of floats as ``square``)
    if name.startswith("hpow"):
        return np.power(ins[0], float(name[4:]))
    ufunc = getattr(np, name)
    try:
        return ufunc(*ins, signature=tuple(loop))
    except TypeError:           # no loop of exactly those dtypes: NumPy's own choice
        return ufunc(*ins)


# -- NumPy's warnings for a flush whose fused kernels raised floating-point flags ---------------

_TEXTS = ((1, "divide by zero"), (2, "overflow"), (4, "underflow"), (8, "invalid value"))
_FLOAT = {"add", "subtract", "multiply", "divide", "true_divide", "power", "square", "reciprocal"}
_CAN = {1: {"divide", "true_divide", "power", "reciprocal", "floor_divide", "remainder", "fmod",
            "log", "log2", "log10", "log1p", "arctanh"},     # (not add, subtract, multiply)
        2: _FLOAT | {"exp", "exp2", "expm1", "cosh", "sinh", "hypot", "ldexp", "copy", "sum", "prod"},
        4: _FLOAT | {"exp", "exp2", "expm1", "copy", "sum", "prod"},
        8: _FLOAT | {"floor_divide", "remainder", "fmod", "sqrt", "log", "log2", "log10", "log1p",
                     "arcsin", "arccos", "arccosh", "arctanh", "sin", "cos", "tan", "copy", "sum",
                     "prod"}}


class Caught:
    """The warnings that NumPy's calls give while they run for recorded operations ``recorded``
    (:class:`~flamefuse.runtime.recorded.Recorded`, in the order the calls are numbered; None:
    no lines known), caught (``with``, all of them: ``always``) and then issued again
    (:meth:`issue`), each at the ``site`` of the op whose calls gave it (:meth:`op` marks where
    op ``k``'s calls start); at the line that made the flush run where that is not known."""

    def __init__(self, recorded=None):
        self.recorded = recorded
        self.list: list = []
        self.marks: list = []       # (warnings caught before op k's calls, k)

    def __enter__(self):
        # ``catch_warnings`` with ``simplefilter("always")``, less their ``_filters_mutated()``:
        # that marks every module's ``__warningregistry__`` stale, so the script's line that
        # warned once under NumPy (a loop's ``y = 1.0 / x``) warned again after each flush.
        # Python reads ``warnings.filters`` at each warning; the registries are left alone (an
        # ``always`` warning neither reads nor writes the one of flamefuse's frame).
        mod = warnings
        self._saved = (mod.filters, mod.showwarning, mod._showwarnmsg_impl)
        self.list = []
        mod.filters = [("always", None, Warning, None, 0)]
        mod.showwarning = mod._showwarning_orig
        mod._showwarnmsg_impl = self.list.append
        return self

    def __exit__(self, *exc):
        mod = warnings
        mod.filters, mod.showwarning, mod._showwarnmsg_impl = self._saved
        return False

    def op(self, k: int) -> None:
        self.marks.append((len(self.list), k))

    def site(self, k):
        """The line op ``k`` was recorded at (None: not known)."""
        rec = self.recorded
        return getattr(rec[k], "site", None) if rec is not None and k is not None and k < len(rec) else None

    def issue(self, keep=None) -> None:
        """Each caught warning (those ``keep(w)`` accepts) issued again, in order, at its op's line."""
        marks, m, k = self.marks, 0, None
        for i, w in enumerate(self.list):
            while m < len(marks) and marks[m][0] <= i:
                k, m = marks[m][1], m + 1
            if keep is None or keep(w):
                warn_at(self.site(k), w.message, w.category)


def watching():
    """``(watch, collect)`` around a kernel that is not a flush's program (a product group's
    loop nest, a clustered filter loop): the NumPy bits whose error state is ``warn``, the flags
    cleared, and a context that collects the flags of a kernel run as plain Python
    (:func:`flamefuse.runtime.fpflags.collecting`) instead of warning per element. After the
    kernel, :func:`flagged` says which watched categories it raised."""
    from contextlib import nullcontext

    from flamefuse.runtime import fpflags
    watch = fpflags.watched()
    if not watch:
        return 0, nullcontext()
    fpflags.clear()
    return watch, fpflags.collecting()


def flagged(watch: int, parallel: bool = False) -> int:
    """The watched categories raised since :func:`watching`; with ``parallel`` (a kernel that
    may have run on Numba's threads) theirs too, in a process that imported Numba."""
    from flamefuse.runtime import fpflags
    if not watch:
        return 0
    bits = fpflags.raised()
    if parallel and "numba" in sys.modules:
        from flamefuse.runtime import numba_flags
        bits |= numba_flags.bits()
    return bits & watch


def warn_from_numpy(run_numpy, recorded=None) -> None:
    """NumPy's own warnings for a kernel that raised a watched flag: ``run_numpy(mark)`` runs what
    the kernel computed as NumPy's calls (into scratch outputs, or into the outputs again: the
    inputs unchanged), calling ``mark(k)`` before the calls of op ``k`` of ``recorded`` where it
    can, and each warning it gives is issued again at the script's line of the op that gave it
    (:class:`Caught`; the line that made the flush run where none is known)."""
    caught = Caught(recorded)
    try:
        with caught:
            run_numpy(caught.op)
    finally:                            # (those before an error NumPy's run raised, too)
        caught.issue()


def warn_like_numpy(program: Program, buffers: list, scalars: list, bits: int, recorded=None) -> None:
    """The ``RuntimeWarning``\\ s NumPy would have given for ``program``, whose fused kernels
    raised the floating-point flags ``bits`` (NumPy's categories whose error state is ``warn``),
    each at the script's line of the op (of ``recorded``, the ops the program's were numbered
    from, in order) that gives it (:class:`Caught`), at the line that made the flush run where
    that is not known.

    When no operation of ``program`` writes an array that existed before the flush (every
    output is a new array: ``r = 1.0 / x``, the usual case), its inputs are still as they
    were: the operations run again as NumPy's calls (:func:`run`'s) into scratch outputs, and
    the warnings they give are NumPy's own, in order, one per call and category (``divide by
    zero encountered in divide``, ``overflow encountered in reduce``). That costs a NumPy run
    of the flush, only where a watched flag was raised. Otherwise (an in-place update
    ``x += 1 / y``) an op whose inputs no op from it on writes read the values the flush ended
    with: those run again as NumPy's calls (into copies of their outputs), their warnings
    NumPy's own, each at its line (:func:`_in_place_warnings`). A category raised that they do
    not give is named once, for the first of the others (whose inputs are gone) that can raise
    it, as ``<category> encountered in <ufunc>``: NumPy's text where that operation raised it,
    at its line, and possibly fewer warnings than NumPy's (which gives one per call that raised
    it)."""
    bases = program.bases
    if all(bases[op.out.base].fresh for op in program.ops):
        scratch = [np.empty(b.size, b.dtype) if b.fresh else buffers[i] for i, b in enumerate(bases)]
        caught = Caught(recorded)
        try:
            with caught:
                for k, op in enumerate(program.ops):
                    caught.op(k)
                    _run_op(op, scratch, scalars)
        except Exception:       # (an op NumPy's calls here cannot run: named below instead)
            caught = None
        if caught is not None:
            caught.issue()
            return
    elif _in_place_warnings(program, buffers, scalars, bits, recorded):
        return
    _name_raised(program.ops, bits, recorded, bases)


def _in_place_warnings(program: Program, buffers: list, scalars: list, bits: int, recorded) -> bool:
    """:func:`warn_like_numpy` for a flush that wrote arrays in place. The ops run again in order
    as NumPy's calls, new arrays into scratch buffers (as for a flush with none), except where an
    op's inputs are not known as they were: an array that existed before the flush and is
    written by this op or a later one (its old values are gone), or a scratch buffer such an op
    should have written. An op whose output existed before writes into a copy of it (never
    into the script's array). Their warnings are issued at their lines; a raised category none
    of them gave is named for the other ops (:func:`_name_raised`). False (nothing issued)
    where such a call fails."""
    ops, bases = program.ops, program.bases
    last = {}
    for k, op in enumerate(ops):
        last[op.out.base] = k
    bufs = [np.empty(b.size, b.dtype) if b.fresh else buffers[i] for i, b in enumerate(bases)]
    stale, exact = set(), []
    caught = Caught(recorded)
    try:
        with caught:
            for k, op in enumerate(ops):
                b = op.out.base
                if not all(r.base not in stale if bases[r.base].fresh else last.get(r.base, -1) < k
                           for r in op.refs_in()):
                    if bases[b].fresh:
                        stale.add(b)
                    continue
                exact.append(k)
                target = bufs
                if not bases[b].fresh:
                    target = list(bufs)
                    target[b] = buffers[b].copy()
                caught.op(k)
                _run_op(op, target, scalars)
    except Exception:       # noqa: BLE001 -- (an op NumPy's calls here cannot run: all named instead)
        return False
    caught.issue()
    seen = 0
    for w in caught.list:
        for bit, text in _TEXTS:
            if str(w.message).startswith(text):
                seen |= bit
    others = set(range(len(ops))) - set(exact)
    if bits & ~seen and others:
        _name_raised(ops, bits & ~seen, recorded, program.bases, only=others)
    return True


def warn_categories(bits: int, name: str) -> None:
    """``<category> encountered in <name>`` for each category in ``bits``, once, at the
    script's line: NumPy's warning of a call ``name`` whose work a kernel or library call did
    (``overflow encountered in matmul`` for a product run as the BLAS syrk)."""
    for bit, text in _TEXTS:
        if bits & bit:
            warn_at(None, f"{text} encountered in {name}", RuntimeWarning)


def name_raised(ops, bits: int) -> None:
    """NumPy's warning for each category in ``bits`` that recorded ops ``ops`` (``kind``,
    ``name``) raised, once, named after the first op that can raise it (a clustered filter
    loop, whose selections NumPy's calls here do not run again), at that op's line."""
    _name_raised(ops, bits, ops)


def _can_raise(op, dst=None) -> int:
    """The categories (bits of :data:`_TEXTS`) op ``op`` can raise (``dst``: its output's dtype,
    where known). A copy raises only as a cast NumPy warns of: a float to an integer (``invalid
    value encountered in cast``), a float to a narrower float (overflow, underflow);
    ``x[::7] = np.nan`` (a float64 copy) raises nothing, and was named for the
    ``astype(np.int32)`` after it."""
    if op.name == "copy" and dst is not None:
        loop = getattr(op, "loop", None)
        if loop:
            src, dst = np.dtype(loop[0]), np.dtype(dst)
            if src.kind not in "fc" or src == dst:
                return 0
            if dst.kind in "iu":
                return 8
            return 6 if dst.kind in "fc" and dst.itemsize < src.itemsize else 0
    return sum(bit for bit, _ in _TEXTS if op.name in _CAN[bit])


def _name_raised(ops, bits: int, recorded=None, bases=None, only=None) -> None:
    """Each category is named after the op that can raise the most of the categories still
    unnamed (the first such): ``x * 1.0`` then ``x / 0`` raising divide and invalid names the
    divide for both, as NumPy, whose divide raised both. It is issued at that op's line (its
    op of ``recorded``, :class:`Caught`); a category no op can raise, at the line that made the
    flush run. ``bases``: the program's bases (its ops' outputs' dtypes), where known; ``only``:
    the indices of the ops that may be named (a category none of them can raise: not named)."""
    left, lines = bits, Caught(recorded)
    while True:
        best, best_bits = None, 0
        for k, op in enumerate(ops):
            if only is not None and k not in only:
                continue
            can = _can_raise(op, None if bases is None else bases[op.out.base].dtype) & left
            if bin(can).count("1") > bin(best_bits).count("1"):
                best, best_bits = k, can
        if best is None:
            break
        left &= ~best_bits
        op = ops[best]
        name = "reduce" if op.kind in ("reduce", "sreduce") else op.name
        for bit, text in _TEXTS:
            if best_bits & bit:
                warn_at(lines.site(best), f"{text} encountered in {'cast' if name == 'copy' else name}",
                        RuntimeWarning)
    for bit, text in _TEXTS:
        if left & bit and only is None:
            warn_at(None, f"{text} encountered in a fused operation", RuntimeWarning)
