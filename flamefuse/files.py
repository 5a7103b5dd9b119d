"""Write output files all at once or not at all (temporary file beside it, then rename).

``write_text_atomic(path, text) -> Path`` creates the parent folder, writes
``text`` to a temporary file in it (mode 0644) and renames it over ``path``,
so a reader (or Numba's importer) never sees a half-written file;
``write_bytes_atomic(path, data)`` does the same for bytes (the cache store's entries,
:mod:`flamefuse.store`).
``import_file(path, name) -> module`` imports a Python file under ``name``,
registered in ``sys.modules`` first (Numba's on-disk cache finds generated
modules again by that name).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> Path:
    return _write_atomic(path, text, "w")


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    return _write_atomic(path, data, "wb")


def _write_atomic(path: Path, data, mode: str) -> Path:
    import tempfile         # here: a warm run writes nothing and never needs it (shutil, random...)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def import_file(path: Path, name: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
