"""Recorded programs as hashable values: the input of graph building, partitioning and the merge cache.

* :class:`Ref`    -- an array operand: base number (by first use) and :class:`View`.
* :class:`Scalar` -- a scalar operand: scalar number (by first use) and its loop dtype.
* :class:`Op`     -- one operation. ``kind`` is ``"ew"`` (elementwise: ufunc name,
  ``"copy"`` or ``"where"``) or ``"reduce"`` (``name`` in sum/prod/max/min/any/all;
  ``axis`` is ``None`` for a full reduction, else the reduced axis). ``shape`` is
  the iteration shape; ``loop`` the dtypes the operation computes in
  (inputs..., result), as strings; every array input view has the iteration
  shape (broadcast dimensions have stride 0).
* :class:`BaseInfo` -- dtype, size in elements, ``fresh`` (no data before this
  program) and ``dead`` (no Python object refers to it any more).
* :class:`Program` -- ops and bases; equal programs get equal partitions and
  kernels, which is the merge cache's key.
* :func:`dtype_name` -- ``dtype.name`` from a dict (NumPy computes the name in Python, about
  1.4 us; a flush names each base's dtype).
"""
from __future__ import annotations

from flamefuse.runtime.views import View
from flamefuse.values import value

_set = object.__setattr__


@value(slots=True)
class Ref:
    """An array operand: base number (by first use) and :class:`View`."""
    base: int
    view: View

    def __init__(self, base, view):
        _set(self, "base", base)
        _set(self, "view", view)


@value(slots=True)
class Scalar:
    """A scalar operand: scalar number (by first use) and its loop dtype."""
    index: int
    dtype: str

    def __init__(self, index, dtype):
        _set(self, "index", index)
        _set(self, "dtype", dtype)


@value(slots=True)
class Op:
    """One recorded operation (see the module doc)."""
    kind: str
    name: str
    out: Ref
    ins: tuple
    shape: tuple[int, ...]
    loop: tuple[str, ...]
    axis: int | None = None

    def __init__(self, kind, name, out, ins, shape, loop, axis=None):
        _set(self, "kind", kind)
        _set(self, "name", name)
        _set(self, "out", out)
        _set(self, "ins", ins)
        _set(self, "shape", shape)
        _set(self, "loop", loop)
        _set(self, "axis", axis)

    def refs_in(self) -> tuple[Ref, ...]:
        return tuple(r for r in self.ins if isinstance(r, Ref))


_NAMES: dict = {}


def dtype_name(dt) -> str:
    """``dt.name`` of a NumPy dtype, remembered."""
    name = _NAMES.get(dt)
    if name is None:
        name = _NAMES[dt] = dt.name
    return name


@value(slots=True)
class BaseInfo:
    """A base: dtype, size in elements, ``fresh`` and ``dead`` (see the module doc)."""
    dtype: str
    size: int
    fresh: bool
    dead: bool

    def __init__(self, dtype, size, fresh, dead):
        _set(self, "dtype", dtype)
        _set(self, "size", size)
        _set(self, "fresh", fresh)
        _set(self, "dead", dead)


@value(slots=True)
class Program:
    """Ops and bases: the merge cache's key (see the module doc)."""
    ops: tuple[Op, ...]
    bases: tuple[BaseInfo, ...]

    def __init__(self, ops, bases):
        _set(self, "ops", ops)
        _set(self, "bases", bases)
