"""``flamefuse bench NAME``: run a benchmark from the repository's ``benchmarks/``.

Each ``benchmarks/<name>.py`` exposes ``main(argv: list[str]) -> int``.
``flamefuse bench`` with no name lists them; ``flamefuse bench all`` runs
each in turn. ``side_by_side(contenders, reps)`` is the shared timing loop
(fresh inputs, random order, minimum of ``reps``).  Benchmarks print rich tables and write their results under
``benchmarks/results/``.  The benchmarks are part of the repository, not of an
installed wheel: there ``flamefuse bench`` says so (exit code 2).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from flamefuse.errors import fail
from flamefuse.files import import_file
from flamefuse.shipped import repository

_ROOT = repository()
BENCH_DIR = _ROOT / "benchmarks" if _ROOT is not None else None


def side_by_side(contenders: dict, reps: int, pause: float = 0.2) -> dict:
    """Minimum time per label of ``contenders`` (label -> (call, make_input)): every repetition
    runs each once on a fresh input made outside the timed region, in a fresh random order,
    after a pause (OpenBLAS threads spin for a while after a call)."""
    import random
    import time
    best = {k: float("inf") for k in contenders}
    order, rng = list(contenders), random.Random(0)
    for _ in range(reps):
        rng.shuffle(order)
        for label in order:
            call, make = contenders[label]
            arg = make()
            time.sleep(pause)
            t = time.perf_counter()
            call(arg)
            best[label] = min(best[label], time.perf_counter() - t)
    return best


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
