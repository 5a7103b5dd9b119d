"""``flamefuse bench NAME``: run a benchmark from the repository's ``benchmarks/``.

Each ``benchmarks/<name>.py`` exposes ``main(argv: list[str]) -> int``.
``flamefuse bench`` with no name lists them; ``flamefuse bench all`` runs
each in turn; they time through :mod:`flamefuse.timing`.  Benchmarks print rich tables and write their results under
``benchmarks/results/``.  The benchmarks are part of the repository, not of an
installed wheel: there ``flamefuse bench`` says so (exit code 2).
"""
from __future__ import annotations

import argparse

from flamefuse.errors import fail
from flamefuse.files import import_file
from flamefuse.shipped import repository

_ROOT = repository()
BENCH_DIR = _ROOT / "benchmarks" if _ROOT is not None else None


def available() -> list[str]:
    if BENCH_DIR is None or not BENCH_DIR.is_dir():
        return []
    return sorted(p.stem for p in BENCH_DIR.glob("*.py") if not p.stem.startswith("_"))


def load(name: str):
    if BENCH_DIR is None or not BENCH_DIR.is_dir():
        fail("the benchmarks are part of flamefuse's repository (benchmarks/, their results go to "
             "benchmarks/results/), not of an installed flamefuse",
             hint="run `flamefuse bench` in a checkout of the repository (`make bench` there runs them all)")
    path = BENCH_DIR / f"{name}.py"
    if not path.is_file():
        fail(f"no benchmark named {name!r}",
             hint=f"choose one of: {', '.join(available()) or '(none found in ' + str(BENCH_DIR) + ')'}")
    return import_file(path, f"flamefuse_bench_{name}")


def run(args) -> int:
    if not args.name:
        if BENCH_DIR is None:
            load("")               # says where the benchmarks are
        print("benchmarks: " + ", ".join(available()))
        return 0
    names = available() if args.name == "all" else [args.name]
    status = 0
    for name in names:
        status = max(status, int(load(name).main(list(args.rest)) or 0))
    return status


def register(sub) -> None:
    p = sub.add_parser("bench", help="run a benchmark from benchmarks/ (or 'all')")
    p.add_argument("name", nargs="?", help="benchmark name (file stem in benchmarks/), or 'all'")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments passed to the benchmark")
    p.set_defaults(func=run)
