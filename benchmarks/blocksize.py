"""Default block size (``block_size=None``) vs the best one vs LAPACK, side by side.

    flamefuse bench blocksize [--specs spd_inverse,...] [--sizes 64,...] [--reps 7]
                              [--write] [--docs docs/blocksize.md]

Without ``--write``: for each spec and n, the generated ``DEFAULT`` kernel is
timed with the module's own default (``block_size=None``, the committed
table) and with every candidate block size, interleaved (each repetition
runs every contender once on fresh copies; minimum of ``--reps``), and for
the SPD inverse beside LAPACK potrf + potri.  The candidates are every
block size with the BLAS on one thread ("nb/1") and on its default threads;
the default is the committed table's choice of both.  The ratio default /
best is the loss of the default; the target is <= 1.10.

``--write`` re-measures the committed table (``flamefuse/codegen/block_sizes.py``)
for every shipped spec with a generated module, then regenerates
``generated/`` so the modules carry it.  Run it on the machine the kernels
are for; the table records that machine.
"""
from __future__ import annotations

import argparse
import importlib
import os
import time
from pathlib import Path

import numpy as np
import scipy.linalg.lapack as lapack
from rich.console import Console
from rich.table import Table

from flamefuse.codegen import load_generated, tune
from flamefuse.pipeline import regenerate_all
from flamefuse.machine import tuning_key
from flamefuse.spec import load
from flamefuse.timing import side_by_side, timed

ROOT = Path(__file__).resolve().parent.parent
SPECS, GENERATED = ROOT / "specs", ROOT / "generated"
DOCS = ROOT / "docs" / "blocksize.md"
SIZES = (64, 128, 256, 384, 512, 768, 1024, 2048)
SETTLE = 0.3
BEGIN, END = "<!-- blocksize:begin -->", "<!-- blocksize:end -->"


def shipped() -> list[str]:
    return sorted(p.stem for p in GENERATED.glob("*.py"))


def write(console: Console, names: list[str]) -> int:
    from flamefuse.codegen import block_sizes
    table = dict(block_sizes.TABLE)         # a partial re-measurement keeps the other specs' rows
    for name in names:
        problem, mod = load(SPECS / f"{name}.yaml"), load_generated(GENERATED / f"{name}.py")
        mod.DEFAULT(*tune.inputs(problem, 8, np.random.default_rng(0)))      # compile first
        took, table[name] = timed(tune.tune_table, problem, mod, on_size=lambda n, nb, serial: console.print(
            f"  {name}: n = {n}: block size {nb}" + (", one BLAS thread" if serial else "")))
        console.print(f"{name}: {table[name]} ({took:.0f} s)")
    path = tune.write_table(table)
    importlib.reload(block_sizes)            # regenerate from the table just written
    written = regenerate_all(SPECS, GENERATED)
    console.print(f"wrote {path.relative_to(ROOT)}; regenerated {len(written)} modules in generated/")
    return 0


def _timed(base, reps: int, contenders: dict) -> dict:
    """Minimum time per contender; each repetition runs all of them in a fresh random order,
    with a pause around LAPACK (OpenBLAS threads spin for a while after a call)."""
    def fresh():
        return [a.copy(order="F") if a.ndim == 2 else a.copy() for a in base]
    return side_by_side({label: (call, fresh) for label, call in contenders.items()}, reps,
                        pause=lambda label, previous: SETTLE if "LAPACK" in (label, previous) else 0)


def _potrf_potri(args):
    c, _ = lapack.dpotrf(args[0], lower=1, overwrite_a=1)
    lapack.dpotri(c, lower=1, overwrite_c=1)


def measure(name: str, n: int, reps: int) -> dict:
    problem, mod = load(SPECS / f"{name}.yaml"), load_generated(GENERATED / f"{name}.py")
    base = tune.inputs(problem, n, np.random.default_rng(n))
    default = mod.block_size_for(n)
    contenders = {"default": lambda a: mod.DEFAULT(*a)}
    for nb in tune.candidates(n):
        for serial in (1, 0):
            contenders[nb, serial] = lambda a, nb=nb, serial=serial: tune.call_with(mod, a, nb, serial)
    if name == "spd_inverse":
        contenders["LAPACK"] = _potrf_potri
    contenders["default"](base)
    t = _timed(base, reps * (5 if n <= 256 else 2 if n <= 1024 else 1), contenders)
    configs = [k for k in contenders if isinstance(k, tuple)]
    best = min(configs, key=lambda k: t[k])
    row = {"spec": name, "n": n, "default_nb": f"{default}{'/1' if tune.serial(tune.table_for(name), n) else ''}",
           "best_nb": f"{best[0]}{'/1' if best[1] else ''}", "default": t["default"],
           "best": t[best], "loss": t["default"] / t[best]}
    if "LAPACK" in t:
        row["lapack"] = t["LAPACK"]
    return row


def markdown(rows: list[dict], meta: str) -> str:
    out = [meta, "", "| spec | n | default nb | best nb | default [ms] | best [ms] | default / best | "
           "default / LAPACK |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lap = f"{r['default'] / r['lapack']:.2f}" if "lapack" in r else "-"
        out.append(f"| {r['spec']} | {r['n']} | {r['default_nb']} | {r['best_nb']} | {1e3 * r['default']:.3g} | "
                   f"{1e3 * r['best']:.3g} | {r['loss']:.2f} | {lap} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench blocksize")
    ap.add_argument("--specs", default=None,
                    help="comma-separated specs (default: spd_inverse,chol_trsm,general_inverse,trinv; "
                         "with --write every spec in generated/)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--write", action="store_true", help="re-measure the committed table and regenerate")
    ap.add_argument("--docs", default=str(DOCS), help="markdown file whose table is replaced")
    args = ap.parse_args(argv)
    console = Console() if Console().is_terminal else Console(width=160)
    names = args.specs.split(",") if args.specs else shipped() if args.write else \
        ["spd_inverse", "chol_trsm", "general_inverse", "trinv"]
    if args.write:
        return write(console, names)
    load_before = os.getloadavg()[0]
    rows = []
    for name in names:
        for n in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(name, n, args.reps))
            r = rows[-1]
            console.print(f"{name} n={n}: default nb {r['default_nb']} {1e3 * r['default']:.3g} ms, best nb "
                          f"{r['best_nb']} {1e3 * r['best']:.3g} ms, loss {r['loss']:.2f}")
    meta = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {tuning_key()}, "
            f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, min of {args.reps} "
            f"interleaved repetitions, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after. "
            "Target: default / best <= 1.10.")
    table = Table(title="default block size vs best", show_edge=False)
    for col in ("spec", "n", "default nb", "best nb", "default / best", "default / LAPACK"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["spec"], str(r["n"]), str(r["default_nb"]), str(r["best_nb"]), f"{r['loss']:.2f}",
                      f"{r['default'] / r['lapack']:.2f}" if "lapack" in r else "-")
    console.print(table)
    path = Path(args.docs)
    if path.is_file() and BEGIN in path.read_text():
        head, rest = path.read_text().split(BEGIN, 1)
        path.write_text(f"{head}{BEGIN}\n{markdown(rows, meta)}\n{END}{rest.split(END, 1)[1]}")
    return int(any(r["loss"] > 1.10 for r in rows))
