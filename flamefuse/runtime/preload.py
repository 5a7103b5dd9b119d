"""Kernels a script used last time, loaded in the background while it starts again.

Loading a cached Numba kernel costs 3-20 ms (its compiled code is read and linked for its
argument types) after Numba's own 0.45 s set-up, paid at the kernel's first call, inside the
script's run. ``flamefuse fuse`` remembers, per script (its path and text), the kernels whose
first call it saw and their argument types (:func:`flamefuse.runtime.native.signature` codes):
``record(source, sig)`` (called by :func:`flamefuse.runtime.execute.run` at each first call)
and ``save(script)`` at the end write ``<cache>/scripts/<digest>.json`` (JSON: a list of
``[source, [code, ...]]``; data that cannot run code, read only when it is the user's own
private file, :func:`flamefuse.trust.read_trusted`). On the next run
``load(script)`` (in the start-up thread of :mod:`flamefuse.runtime.command`) loads those
kernels for those types: their native libraries (:mod:`flamefuse.runtime.native`, no Numba),
and through Numba only those that have none (``load(script, set_up)`` calls ``set_up`` first,
once, when Numba is needed: some kernel has no library, or there is no record yet), so the
script's first calls find them ready.

A missing, damaged or foreign file loads nothing; a kernel that fails to load is
skipped (its first call then compiles or loads it as before). ``FLAMEFUSE_PRELOAD=0``
turns both sides off.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from flamefuse.files import write_text_atomic
from flamefuse.trust import read_trusted

_SEEN: dict = {}          # kernel source -> set of argument signatures (native.signature codes)


def enabled() -> bool:
    return os.environ.get("FLAMEFUSE_PRELOAD", "1") != "0"


def _file(script: Path) -> Path | None:
    from flamefuse.cache import usable_cache_dir
    folder = usable_cache_dir("scripts")
    if folder is None:
        return None
    try:
        text = script.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(str(script.resolve()).encode() + b"\0" + text).hexdigest()[:32]
    return folder / f"{digest}.json"


def record(source: str, sig: tuple) -> None:
    """Note a kernel's first call: its source and its arguments' signature ``sig``."""
    if enabled():
        _SEEN.setdefault(source, set()).add(sig)


def save(script: Path) -> None:
    """Write the kernels first called in this run for ``script`` (only those: a kernel an older
    run used and this one did not would be loaded, through Numba, at every later start)."""
    if not enabled() or not _SEEN:
        return
    path = _file(script)
    if path is None:
        return
    entries = [[src, list(sig)] for src in sorted(_SEEN) for sig in sorted(_SEEN[src])]
    try:
        write_text_atomic(path, json.dumps(entries))
    except OSError:
        pass


def _entries(script: Path) -> list:
    if not enabled():
        return []
    path = _file(script)
    data = None if path is None else read_trusted(path)
    if data is None:
        return []
    try:
        entries = json.loads(data)
        return [(src, tuple(sig)) for src, sig in entries
                if isinstance(src, str) and isinstance(sig, list) and all(isinstance(c, str) for c in sig)]
    except (ValueError, TypeError):  # damaged, or from another version: nothing
        return []


def load(script: Path, set_up=None) -> int:
    """Load the kernels ``script`` used last time; returns how many were loaded. ``set_up()``
    (Numba's own set-up) runs first when some kernel will come from Numba."""
    from flamefuse.runtime import native
    entries = _entries(script)
    missing = [(src, sig) for src, sig in entries if native.find(src, sig) is None]
    if set_up is not None and (missing or not entries):
        set_up()
    from flamefuse.runtime.kernel import compile_kernel
    done = len(entries) - len(missing)
    for source, sig in missing:
        try:
            compile_kernel(source).compile(native.numba_types(sig))
        except Exception:          # noqa: BLE001 -- the first call will load or compile it
            continue
        done += 1
    return done
