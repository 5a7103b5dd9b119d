"""flamefuse command line: one entry point, every sub-command in this package.

The layer above the stages: each sub-command is a module here (``flamefuse.cli.<command>``)
that exposes ``register(subparsers)``; the module adds its parser and sets ``func`` to a
function ``(args) -> int``.  ``COMMAND_OF`` is the one command table.  The stages never
import this package.  Errors reach this edge as :class:`FlameError` and leave as one
readable message with exit code 2.  ``python -m flamefuse.cli`` runs :func:`main`
(:mod:`.__main__`); the console script ``flamefuse`` is ``flamefuse.cli:main``.
"""
from __future__ import annotations

import time

STARTED = time.perf_counter()    # flamefuse's first moment in the process (``fuse``'s start-up line)

import sys  # noqa: E402

# the one command table: each sub-command and its module; ``flamefuse fuse`` imports only its
# own module (start-up time: the others load OR-Tools, SciPy and the clustering machinery)
COMMAND_OF = {name: f"flamefuse.cli.{name}" for name in
              ("derive", "bench", "fuse", "cluster", "loopnest", "tiles", "cache")}
COMMAND_MODULES = tuple(dict.fromkeys(COMMAND_OF.values()))


def build_parser(only: str | None = None):
    """The parser (an ``argparse.ArgumentParser``) with every sub-command, or only sub-command
    ``only`` (a key of COMMAND_OF)."""
    import argparse
    import importlib
    parser = argparse.ArgumentParser(
        prog="flamefuse",
        description="Loop-fusion algorithm synthesizer for FLAME-style dense linear algebra.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in ([COMMAND_OF[only]] if only in COMMAND_OF else COMMAND_MODULES):
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = argv[0] if argv else None
    args = None
    if first == "fuse":         # its common forms without argparse (start-up: docs/startup.md)
        from flamefuse.cli.fuse import quick_args
        args = quick_args(argv[1:])
    if args is None:
        args = build_parser(first).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0
    except Exception as err:
        from flamefuse.errors import FlameError     # (not imported by a run without an error)
        if not isinstance(err, FlameError):
            raise
        print(err.diagnostic.render(), file=sys.stderr)
        return 2

