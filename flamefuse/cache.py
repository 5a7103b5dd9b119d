"""The user cache folder of flamefuse (never inside the repository).

``cache_dir(name)`` is ``$FLAMEFUSE_CACHE_DIR/<name>``, else
``$XDG_CACHE_HOME/flamefuse/<name>``, else ``~/.cache/flamefuse/<name>``;
created on first use.  Generated kernel modules (and Numba's cache beside
them) and tuning tables live there.
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    explicit = os.environ.get("FLAMEFUSE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flamefuse"


def cache_dir(name: str) -> Path:
    path = cache_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
