"""A script's adaptive-fusion entry: its key and reading it (:mod:`flamefuse.runtime.adapt`).

What a ``flamefuse fuse`` run reads before it knows whether it runs fused or as plain NumPy,
kept apart from the model of :mod:`flamefuse.runtime.adapt` (its tallies, its decisions, NumPy's
measured costs, and writing the entry) so that a run settled as plain NumPy imports no more
than this, the store and the probe's few functions (start-up: docs/startup.md):

``enabled()``: adaptive fusion is on (``FLAMEFUSE_ADAPT``). ``key(script, argv, text)``: the
entry's key, a digest of the script's resolved path, its arguments and its text (None when
the script cannot be read). ``load(script, argv, text)``: last run's decisions for this
script, its text and arguments (the JSON entry of the store's kind ``adapt``); None when
there are none, or they are damaged, or adaptive fusion is off. ``text`` is the script's
bytes where the caller has read them already (else they are read here). ``script`` is a
path as a string or a ``pathlib.Path`` (the key is the same: ``os.path.realpath`` is what
``Path.resolve`` computes; a plain run imports no ``pathlib``).
"""
from __future__ import annotations

import os

from flamefuse import jsontext, store, switches
from flamefuse.digest import sha256


def enabled() -> bool:
    return switches.on("FLAMEFUSE_ADAPT")


def key(script, argv: list, text: bytes | None = None) -> str | None:
    """The entry's key (see the module doc): the SHA-256 of ``json.dumps([resolved path,
    [arguments]])`` and the text."""
    if text is None:
        try:
            with open(script, "rb") as f:
                text = f.read()
        except OSError:
            return None
    args = ", ".join(jsontext.quote(str(a)) for a in argv)
    named = f"[{jsontext.quote(os.path.realpath(script))}, [{args}]]".encode()
    return sha256(named + b"\0" + text).hexdigest()[:32]


def load(script, argv: list, text: bytes | None = None) -> dict | None:
    """Last run's decisions for this script, its text and arguments (see the module doc)."""
    if not enabled():
        return None
    k = key(script, argv, text)
    data = None if k is None else store.get_json("adapt", k)
    if not isinstance(data, dict) or data.get("mode") not in ("numpy", "fused") \
            or not all(isinstance(data.get(f), (int, float)) for f in ("fused_s", "numpy_s")):
        return None
    sites = data.get("numpy_sites")
    if not isinstance(sites, list) or not all(isinstance(s, list) and len(s) == 2 for s in sites):
        return None
    return data


__all__ = ["enabled", "key", "load"]
