"""One recorded operation, as the recorder keeps it until a flush: a small named tuple.

:class:`Recorded` has the fields ``kind`` (``"ew"``, ``"reduce"``, ``"product"``, ``"linalg"``,
``"select"``, ``"sew"``, ``"sreduce"``), ``name`` (a ufunc or reduction name; for ``"linalg"`` the
recorded call object), ``out`` and ``ins`` (operands: ``(base, view)`` for an array, ``(value,
dtype)`` for a scalar; in a numbered segment key, :mod:`flamefuse.runtime.filters`, ``(number,
view)`` and ``("s", index, dtype)``), ``shape`` (the iteration shape, None for selections),
``loop`` (the dtypes computed in: inputs..., result), ``axis`` (a reduction's axis, else
None) and ``site`` (the script's line that recorded it, :func:`flamefuse.runtime.sites.here`, or
None: where a flush's NumPy warnings for it are issued; never part of a plan or cache key). It is a tuple, so a reader may still unpack it; readers use the field names.

It lives in the runtime (no imports) because both :mod:`flamefuse.lazy.recorder`, which makes
them, and the runtime's clustering (:mod:`flamefuse.runtime.filters`) read them.
"""
from __future__ import annotations

from collections import namedtuple

# (``collections.namedtuple``, not a ``typing.NamedTuple`` class: the same class without its
# annotations checked, each compiled as a forward reference, at every fused run's start-up)
Recorded = namedtuple("Recorded", ("kind", "name", "out", "ins", "shape", "loop", "axis", "site"),
                      defaults=(None, None))


def recorded(kind, name, out, ins, shape, loop, axis=None, site=None, _new=tuple.__new__) -> Recorded:
    """A :class:`Recorded` made without the keyword-handling ``__new__`` (the recorder's hot path)."""
    return _new(Recorded, (kind, name, out, ins, shape, loop, axis, site))
