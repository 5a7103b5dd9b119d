"""Every variant of one spec's generated module, side by side (a variant table like libflame's).

    flamefuse bench variants SPEC [--sizes 256,512,1024,2048,4096] [--reps 3] [--write]
    flamefuse bench kernels --variants SPEC [...]          (the same)

For each n, every kernel of ``generated/<SPEC>.py`` (``VARIANTS``) runs on
fresh copies of the same inputs, interleaved in a random order with a pause
between calls (:func:`flamefuse.timing.side_by_side`), minimum of ``--reps``;
block size: the module's default (``block_size=None``, the spec's tuned
table).  Inputs follow each operand's structure: symmetric -> SPD, lower /
upper -> well-conditioned triangular, general -> diagonally dominant,
row-partitioned matrices and vectors -> normal entries (n x 256 right-hand
sides).  Before timing, every variant's result is compared with the first
variant's (they compute the same thing; a difference aborts).

The table prints times in ms and each variant's time relative to the
fastest at that n; the last line names the variant fastest over the sizes
>= 1024 (geometric mean of the relative times).  ``--write`` records that
choice in ``flamefuse/codegen/variants.py`` and regenerates the modules, so
that the module's ``DEFAULT`` is the measured fastest variant (its docstring
says so).  Results: ``benchmarks/results/variants-<SPEC>.json``; every run
rewrites ``docs/variants.md``, the summary over all specs measured so far.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from flamefuse.timing import side_by_side
from flamefuse.codegen import load_generated
from flamefuse.pipeline import regenerate_all
from flamefuse.codegen.variants import write_choice
from flamefuse.errors import fail
from flamefuse.spec import load

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SIZES = (256, 512, 1024, 2048, 4096)
COMMON = 1024          # DEFAULT: fastest over the sizes from here up


def operand(o, n: int, rng) -> np.ndarray:
    if o.kind == "vector":
        return rng.standard_normal(n)
    if o.partition in ("rows", "columns"):
        shape = (n, 256) if o.partition == "rows" else (256, n)
        return np.asfortranarray(rng.standard_normal(shape))
    m = rng.standard_normal((n, n)) / n
    if o.structure == "symmetric":
        return np.asfortranarray(m @ m.T * n / 4 + np.eye(n))
    m += np.diag(2.0 + rng.random(n))
    return np.asfortranarray({"lower": np.tril, "upper": np.triu}.get(o.structure, lambda x: x)(m))


def measure(mod, problem, n: int, reps: int, rng) -> dict:
    base = [operand(o, n, rng) for o in problem.operands]
    fresh = lambda: [x.copy(order="F") for x in base]
    outs = {}
    for name, fn in mod.VARIANTS.items():         # warm-up (JIT / cache load) and agreement
        args = fresh()
        info = fn(*args)
        if info != 0:
            raise RuntimeError(f"{name} n={n}: info = {info}")
        outs[name] = args
    first = next(iter(outs.values()))
    for name, args in outs.items():
        for x, y in zip(args, first):
            err = np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-300)
            if not err < 1e-8:
                raise RuntimeError(f"{name} n={n} differs from the first variant (relative {err:.1e})")
    return side_by_side({name: (lambda a, f=fn: f(*a), fresh) for name, fn in mod.VARIANTS.items()}, reps, pause=0.2)


def fastest(rows: dict[int, dict]) -> str:
    big = [r for n, r in rows.items() if n >= COMMON] or list(rows.values())
    names = list(big[0])
    score = {v: math.exp(sum(math.log(r[v] / min(r.values())) for r in big) / len(big)) for v in names}
    return min(names, key=score.get)


def summary() -> str:
    """``docs/variants.md``: per spec with a recorded table, the fastest variant at each n
    and the spread (slowest / fastest), from ``benchmarks/results/variants-*.json``."""
    lines = ["# Variant tables: the fastest variant of every spec", "",
             "Written by `flamefuse bench variants SPEC` (`benchmarks/variants.py`) from",
             "`benchmarks/results/variants-*.json`: each n's fastest variant, and in brackets the",
             "slowest variant's time relative to it; DEFAULT is the fastest over n >= "
             f"{COMMON} (geometric mean of relative times), recorded in `flamefuse/codegen/variants.py`.",
             "Times are side by side in one run (minimum of the repetitions), 2-core machine.", "",
             "| spec | variants | n: fastest (slowest / fastest) | DEFAULT | measured (load) |",
             "| --- | ---: | --- | --- | --- |"]
    for f in sorted(RESULTS.glob("variants-*.json")):
        d = json.loads(f.read_text())
        cells = []
        for n, r in d["rows"].items():
            best = min(r, key=r.get)
            cells.append(f"{n}: {best.rsplit('_', 1)[-1]} ({max(r.values()) / r[best]:.2f})")
        nvar = len(next(iter(d["rows"].values())))
        lines.append(f"| {d['spec']} | {nvar} | {'; '.join(cells)} | {d['fastest']} | "
                     f"{d['date']} ({max(d['loadavg']):.1f}) |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench variants")
    ap.add_argument("spec")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write", action="store_true",
                    help="record the fastest variant as the module's DEFAULT and regenerate the modules")
    args = ap.parse_args(argv)
    path = ROOT / "generated" / f"{args.spec}.py"
    if not path.is_file():
        fail(f"no generated module {path.relative_to(ROOT)}", hint="`ls generated/` lists the specs with kernels")
    mod, problem = load_generated(path), load(ROOT / "specs" / f"{args.spec}.yaml")
    sizes = [int(s) for s in args.sizes.split(",")]
    console = Console() if Console().is_terminal else Console(width=160)
    load_before, rng, rows = os.getloadavg(), np.random.default_rng(0), {}
    for n in sizes:
        console.print(f"n = {n} ...")
        rows[n] = measure(mod, problem, n, args.reps, rng)
    best = fastest(rows)
    t = Table(title=f"{args.spec}: every variant, times in ms (relative to the fastest at that n)")
    t.add_column("variant")
    for n in sizes:
        t.add_column(f"n={n}", justify="right")
    for v in mod.VARIANTS:
        t.add_row(v + (" (DEFAULT)" if v == mod.DEFAULT_NAME else ""),
                  *[f"{1e3 * rows[n][v]:.3g} ({rows[n][v] / min(rows[n].values()):.2f})" for n in sizes])
    console.print(t)
    console.print(f"fastest for n >= {COMMON} (geometric mean): {best}; load average "
                  f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"variants-{args.spec}.json").write_text(json.dumps(
        {"spec": args.spec, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "reps": args.reps,
         "loadavg": [load_before[0], os.getloadavg()[0]], "fastest": best,
         "rows": {str(n): r for n, r in rows.items()}}, indent=1))
    (ROOT / "docs" / "variants.md").write_text(summary())
    if args.write:
        write_choice(args.spec, best, f"fastest for n >= {COMMON} of n = {', '.join(map(str, sizes))}, "
                                      f"{time.strftime('%Y-%m-%d', time.gmtime())}")
        regenerate_all(ROOT / "specs", ROOT / "generated")
        console.print(f"DEFAULT of {args.spec} is now {best} (flamefuse/codegen/variants.py); modules regenerated")
    return 0
