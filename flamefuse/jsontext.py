"""JSON read, and strings quoted as JSON, without importing :mod:`json`.

``import json`` compiles six regular expressions (its decoder's and encoder's): about 0.8 ms of
CPU in every process that imports it, 15-20% of what a warm ``flamefuse fuse`` run of a script
settled as plain NumPy adds to ``python script.py`` for the one small entry it reads, its
decisions (docs/startup.md). The decoding and quoting are done by CPython's own C functions,
the ones :mod:`json` itself uses (``_json.make_scanner``, ``_json.encode_basestring_ascii``),
without the module around them:

``loads(data)``: the value ``json.loads(data)`` returns for UTF-8 text (``bytes`` or ``str``)
with ``json.loads``'s default settings (``NaN`` and ``Infinity`` read, objects as ``dict``);
``ValueError`` where ``json.loads`` fails (a byte-order mark too). ``quote(text)``: what
``json.dumps(text)`` writes for the string ``text`` (ASCII, escapes as ``json`` writes them).

Writing stays with :mod:`json` (``json.dumps``; an entry is written only when something
changed). Where the interpreter has no ``_json`` (or an older one without these functions),
both fall back to :mod:`json`.
"""
from __future__ import annotations

try:
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner as _make_scanner
except ImportError:                 # no C accelerator: json's own functions
    _quote = _make_scanner = None

_SPACE = " \t\n\r"                  # JSON's white space


class _Defaults:
    """The settings ``json.loads`` decodes with (those of a default ``json.JSONDecoder``), as
    the scanner reads them from its context."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = _make_scanner(_Defaults()) if _make_scanner is not None else None


def loads(data):
    """``json.loads(data)`` for UTF-8 ``data`` (see the module doc)."""
    if _scan is None:
        import json
        return json.loads(data)
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as err:
        raise ValueError(f"no JSON value at character {err.value}") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def quote(text: str) -> str:
    """``json.dumps(text)`` for a ``str``."""
    if _quote is None:
        import json
        return json.dumps(text)
    return _quote(text)


__all__ = ["loads", "quote"]
