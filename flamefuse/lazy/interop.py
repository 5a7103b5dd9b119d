"""Python's own protocols that cannot be answered by LazyArray's methods alone.

``json`` encodes ``float`` subclasses, and NumPy's ``float64`` scalar is one, so
``json.dumps(x.sum())`` works under NumPy; a lazy reduction's result (a 0-d
:class:`~flamefuse.lazy.array.LazyArray` that NumPy would give as a scalar, so that it
can still fuse) is not a float. :func:`install` wraps ``json.JSONEncoder.default`` once:
such a result whose NumPy scalar is a ``float`` is encoded as that float (the same text
NumPy's scalar gives); anything else goes to the encoder's own ``default`` (which raises
``TypeError`` as it does for NumPy's other scalars and arrays).

``json`` is not imported for it (about 1.1 ms of every fused run's start-up: six regular
expressions compiled): where it is imported already, the wrap is made at once; else a finder
first on ``sys.meta_path`` (:class:`_WhenImported`) makes it as ``json`` is imported, by
whichever module imports it first, and then leaves ``sys.meta_path``.
"""
from __future__ import annotations

import sys

_INSTALLED: list = []


def install() -> None:
    """Let ``json`` encode lazy results as it encodes NumPy's scalars (idempotent), now or when
    ``json`` is imported (see the module doc)."""
    if _INSTALLED:
        return
    json = sys.modules.get("json")
    if json is not None and hasattr(json, "JSONEncoder"):
        _wrap(json)
    elif not any(isinstance(f, _WhenImported) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenImported())


def _wrap(json) -> None:
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


class _WhenImported:
    """A meta-path finder for ``json`` only: it finds the module through the finders after it
    (it is never the module's finder of record) and wraps its loader so that the encoder is
    wrapped as soon as the module has run; it then leaves ``sys.meta_path``."""

    def find_spec(self, name, path=None, target=None):
        if name != "json":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Wrapping(spec.loader)
        return spec


class _Wrapping:
    """``json``'s own loader, then the wrap (:func:`_wrap`)."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _wrap(module)

    def __getattr__(self, name):            # get_source, get_code, is_package...: the loader's
        return getattr(self.loader, name)
