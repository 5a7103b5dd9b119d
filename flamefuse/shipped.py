"""What flamefuse ships besides its code: the specs and the generated kernel modules.

In the repository their home is ``specs/*.yaml`` and ``generated/*.py``; an
installed wheel carries them inside the package, as ``flamefuse/specs/`` and
``flamefuse/kernels/`` (copied there by the build step in ``setup.py``).  So
an installed flamefuse reads only files of its own package
(:mod:`importlib.resources`), and a checkout reads its own folders.

``spec_names() -> list[str]``: the shipped specs (``spd_inverse``, ...).
``spec_file(name) -> Path | None``: the file of a shipped spec.
``spec_path(spec) -> Path``: a spec given as a file path or as a shipped spec's
name (an unknown name fails with the list of names).
``kernel(name) -> module``: the generated module ``flamefuse.kernels.<name>``,
or None when the spec has none.
``repository() -> Path | None``: the checkout flamefuse runs from (None when
installed): the benchmarks live there.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path

from flamefuse.errors import fail

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def repository() -> Path | None:
    """The repository root when flamefuse runs from a checkout (its ``specs/`` beside the package)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "specs").is_dir() and (root / "generated").is_dir() else None


def specs_dir() -> Path:
    """The folder of the shipped specs: inside the installed package, else the checkout's ``specs/``."""
    from importlib import resources    # here: only a spec given by name needs it (0.01 s to import)
    inside = Path(str(resources.files("flamefuse") / "specs"))
    if inside.is_dir():
        return inside
    root = repository()
    return root / "specs" if root is not None else inside


def spec_names() -> list[str]:
    folder = specs_dir()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def spec_file(name: str) -> Path | None:
    """The file of the shipped spec ``name``, or None (also for a name that is not a plain identifier)."""
    if not NAME.match(name):
        return None
    path = specs_dir() / f"{name}.yaml"
    return path if path.is_file() else None


def spec_path(spec) -> Path:
    """``spec`` as a shipped spec's name (a plain identifier: ``spd_inverse``) or as a file's path
    (anything with a suffix or a folder: ``my.yaml``, ``./spd_inverse``; the loader reports a missing
    one).  A plain name that is no shipped spec may still be a file; else a failure lists the names."""
    text, path = str(spec), Path(spec)
    if NAME.match(text) is None:
        return path
    found = spec_file(text)
    if found is not None:
        return found
    if path.is_file():
        return path
    fail(f"no spec {text!r}: neither a file nor a shipped spec",
         hint=f"give a spec file's path, or one of the shipped specs: {', '.join(spec_names()) or '(none found)'}")


def kernel(name: str):
    """The generated module of shipped spec ``name`` (``flamefuse.kernels.<name>``), or None."""
    if not NAME.match(name):
        return None
    try:
        return importlib.import_module(f"flamefuse.kernels.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"flamefuse.kernels.{name}":
            raise
        return None
