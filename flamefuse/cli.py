"""flamefuse command line: one entry point, one sub-command per stage.

Each sub-command lives in its own package module, which exposes
``register(subparsers)``; the module adds its parser and sets ``func`` to a
function ``(args) -> int``.  Errors reach this edge as :class:`FlameError`
and leave as one readable message with exit code 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from flamefuse.errors import FlameError

COMMAND_MODULES = (
    "flamefuse.search.command",
    "flamefuse.bench",
    "flamefuse.runtime.command",
    "flamefuse.cluster.command",
    "flamefuse.loopnest.command",
    "flamefuse.dask.command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flamefuse",
        description="Loop-fusion algorithm synthesizer for FLAME-style dense linear algebra.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FlameError as err:
        print(err.diagnostic.render(), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
