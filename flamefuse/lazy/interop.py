"""Python's own protocols that cannot be answered by LazyArray's methods alone.

``json`` encodes ``float`` subclasses, and NumPy's ``float64`` scalar is one, so
``json.dumps(x.sum())`` works under NumPy; a lazy reduction's result (a 0-d
:class:`~flamefuse.lazy.array.LazyArray` that NumPy would give as a scalar, so that it
can still fuse) is not a float. :func:`install` wraps ``json.JSONEncoder.default`` once:
such a result whose NumPy scalar is a ``float`` is encoded as that float (the same text
NumPy's scalar gives); anything else goes to the encoder's own ``default`` (which raises
``TypeError`` as it does for NumPy's other scalars and arrays).
"""
from __future__ import annotations

import json

_INSTALLED: list = []


def install() -> None:
    """Let ``json`` encode lazy results as it encodes NumPy's scalars (idempotent)."""
    if _INSTALLED:
        return
    from flamefuse.lazy.array import LazyArray
    original = json.JSONEncoder.default

    def default(self, o):
        if type(o) is LazyArray and o._sc:
            value = o.numpy()[()]
            if isinstance(value, float):
                return float(value)
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        return original(self, o)

    json.JSONEncoder.default = default
    _INSTALLED.append(original)
