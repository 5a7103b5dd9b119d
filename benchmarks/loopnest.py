"""Fused matrix-vector kernels (flamefuse.loopnest) vs eager NumPy/BLAS, in one run.

For each kernel and size n (square n x n matrices, float64): the eager
NumPy version (BLAS gemv calls plus temporaries) and the fused Numba kernel
(``reorder_float=True``; and the exact-order kernel, ``reorder_float=False``)
are timed alternately, min of ``--reps`` runs each, after a warm-up (compile
excluded).  Achieved bandwidth counts the matrix bytes the fused schedule
must move (every matrix once per top-level nest that touches it) over the
fused time, as a fraction of a measured copy bandwidth (best of
``np.copyto`` and a parallel Numba copy on an n x n array, read + write
bytes).  Targets (n = 4000..8000): BiCG, MVT >= 1.6x, GESUMMV >= 1.3x.

    flamefuse bench loopnest [--sizes 4000,8000] [--reps 11] [--kernels bicg,mvt]
                             [--threading-layer workqueue|omp|tbb|default]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange
from rich.console import Console
from rich.table import Table

from flamefuse.loopnest import KERNELS, fuse_program
from flamefuse.loopnest.parallel import statements

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"bicg": 1.6, "mvt": 1.6, "gesummv": 1.3}


@njit(parallel=True, cache=True)
def _copy(src, dst):
    for k in prange(src.shape[0]):
        dst[k] = src[k]


def copy_bandwidth(n: int, reps: int) -> float:
    src = np.random.default_rng(0).standard_normal(n * n)
    dst = np.empty_like(src)
    _copy(src, dst)
    t = min(_best(lambda: np.copyto(dst, src), reps), _best(lambda: _copy(src, dst), reps))
    return 2 * src.nbytes / t


def _best(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _fresh(inputs):
    return {k: v.copy() if isinstance(v, np.ndarray) and v.ndim == 1 else v for k, v in inputs.items()}


def traffic(kernel, n: int) -> tuple[int, str]:
    """Matrix bytes the fused schedule moves, and the sweeps per matrix."""
    p = kernel.program
    mats = [a.name for a in p.arrays if len(a.shape) == 2]
    sweeps = {m: 0 for m in mats}
    for root in kernel.schedule.roots:
        touched = {acc.array for s in statements(root) for acc, _ in p.statements[s].accesses()}
        for m in mats:
            sweeps[m] += m in touched
    return sum(sweeps.values()) * n * n * 8, " ".join(f"{m}x{c}" for m, c in sweeps.items())


def measure(name: str, n: int, reps: int, rng) -> dict:
    build, eager, make = KERNELS[name]
    fast = fuse_program(build(), reorder_float=True)
    exact = fuse_program(build(), reorder_float=False)
    inputs = make(n, rng)
    for fn in (lambda: eager(**_fresh(inputs)), lambda: fast(**_fresh(inputs)),
               lambda: exact(**_fresh(inputs))):
        fn()
    t_eager, t_fast, t_one, t_exact = [], [], [], []
    threads = numba.get_num_threads()
    for _ in range(reps):          # alternate, so load changes hit all four alike
        t_eager.append(_best(lambda: eager(**_fresh(inputs)), 1))
        t_fast.append(_best(lambda: fast(**_fresh(inputs)), 1))
        numba.set_num_threads(1)
        t_one.append(_best(lambda: fast(**_fresh(inputs)), 1))
        numba.set_num_threads(threads)
        t_exact.append(_best(lambda: exact(**_fresh(inputs)), 1))
    bytes_, sweeps = traffic(fast, n)
    cuts = fast.schedule.explain(fast.program)
    return {"kernel": name, "n": n, "eager_s": min(t_eager), "fused_s": min(t_fast),
            "exact_s": min(t_exact), "one_thread_s": min(t_one),
            "speedup": min(t_eager) / min(t_fast), "speedup_one_thread": min(t_eager) / min(t_one),
            "speedup_exact": min(t_eager) / min(t_exact), "bytes": bytes_, "sweeps": sweeps,
            "nests": len(fast.schedule.roots),
            "parallel": [pl.parallel for pl in fast.plans.values()], "why_not_fully_fused": cuts}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench loopnest")
    ap.add_argument("--sizes", default="4000,8000")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--threading-layer", default="workqueue", choices=("workqueue", "omp", "tbb", "default"),
                    help="Numba threading layer (set before the first parallel kernel runs)")
    args = ap.parse_args(argv)
    numba.config.THREADING_LAYER = args.threading_layer
    sizes = [int(s) for s in args.sizes.split(",")]
    console = Console(width=220)
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()[0]
    rows = []
    for n in sizes:
        bw = copy_bandwidth(n, args.reps)
        for name in args.kernels.split(","):
            console.print(f"[dim]{name} n={n}[/dim]")
            row = measure(name, n, args.reps, rng)
            row["copy_GBs"] = bw / 1e9
            row["fused_GBs"] = row["bytes"] / row["fused_s"] / 1e9
            row["fraction_of_copy"] = row["fused_GBs"] * 1e9 / bw
            rows.append(row)
    meta = {"threads": numba.get_num_threads(), "cpus": os.cpu_count(),
            "threading_layer": numba.threading_layer(),
            "load_before": load_before, "load_after": os.getloadavg()[0],
            "numpy": np.__version__, "numba": numba.__version__, "reps": args.reps}
    table = render(rows, meta)
    console.print(table)
    for row in rows:
        if row["why_not_fully_fused"]:
            console.print(f"[bold]{row['kernel']}[/bold] n={row['n']}: " +
                          " | ".join(row["why_not_fully_fused"]))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "loopnest.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    (ROOT / "docs" / "loopnest-performance.md").write_text(markdown(rows, meta))
    return 0


COLUMNS = ("kernel", "n", "eager NumPy [ms]", "fused [ms]", "speedup", "target",
           "fused 1 thread [ms]", "1-thread speedup", "exact-fp fused [ms]", "exact speedup", "nests", "matrix sweeps", "fused GB/s",
           "of copy BW")


def _cells(r):
    target = TARGETS.get(r["kernel"])
    verdict = "" if target is None else f">= {target} " + ("met" if r["speedup"] >= target else "missed")
    return (r["kernel"], str(r["n"]), f"{r['eager_s'] * 1e3:.1f}", f"{r['fused_s'] * 1e3:.1f}",
            f"{r['speedup']:.2f}x", verdict, f"{r['one_thread_s'] * 1e3:.1f}",
            f"{r['speedup_one_thread']:.2f}x", f"{r['exact_s'] * 1e3:.1f}", f"{r['speedup_exact']:.2f}x",
            str(r["nests"]), r["sweeps"], f"{r['fused_GBs']:.1f}", f"{r['fraction_of_copy']:.0%}")


def render(rows, meta) -> Table:
    table = Table(title=f"loop-nest fusion vs eager NumPy/BLAS ({meta['threads']} Numba threads, "
                        f"min of {meta['reps']}; copy bandwidth {rows[0]['copy_GBs']:.1f} GB/s)")
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in ("kernel", "target", "matrix sweeps") else "right")
    for r in rows:
        table.add_row(*_cells(r))
    return table


def markdown(rows, meta) -> str:
    lines = ["# Loop-nest fusion performance", "",
             "`flamefuse bench loopnest` (generated by the benchmark; baseline: eager NumPy "
             f"{meta['numpy']} with OpenBLAS gemv, same run; Numba {meta['numba']} with "
             f"{meta['threads']} threads ({meta['threading_layer']} layer) on {meta['cpus']} CPUs; min of {meta['reps']} alternating runs; "
             f"load average {meta['load_before']:.1f} before, {meta['load_after']:.1f} after).", "",
             "| " + " | ".join(COLUMNS) + " |",
             "| " + " | ".join("---" if c in ("kernel", "target", "matrix sweeps") else "---:"
                               for c in COLUMNS) + " |"]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    lines += ["", "Copy bandwidth per size: " + ", ".join(
        sorted({f"n={r['n']}: {r['copy_GBs']:.1f} GB/s" for r in rows})) + ".", ""]
    lines += [
        "Columns: *fused* is `fuse_program(..., reorder_float=True)` (parallel outer loop over",
        "2 threads, reductions along it privatised per thread, `fastmath` reassociation);",
        "*fused 1 thread* is the same kernel with `numba.set_num_threads(1)`;",
        "*exact-fp fused* is `reorder_float=False` (same fusion, program summation order, so",
        "sequential wherever a float reduction is carried).  *matrix sweeps*: how many",
        "top-level nests of the fused schedule touch each matrix (eager NumPy sweeps A twice",
        "for BiCG/MVT/ATAX).  *fused GB/s* = those matrix bytes / fused time; *of copy BW* is",
        "its fraction of the measured copy bandwidth (read + write bytes of a copy).",
        "",
        "The machine has 2 cores shared with other jobs: when the load average exceeds 2,",
        "the parallel kernels lose whole time slices at their barrier and every ratio here",
        "is unreliable; rerun on a quiet machine.  The default threading layer is",
        "`workqueue`: with `omp` (Numba's default here) the OpenMP threads spin between",
        "parallel regions, and on the loaded machine a side-by-side BiCG n=4000 check ran the",
        "fused kernel 1.5-2.5x slower (`--threading-layer omp` to compare).", "",
        "GESUMMV has no traffic to save against BLAS (eager NumPy also reads A and B once",
        "each), so fusion alone cannot give it 1.3x; BiCG, MVT and ATAX halve the matrix",
        "traffic (one sweep of A instead of two).", ""]
    notes = {f"{r['kernel']}": r["why_not_fully_fused"] for r in rows if r["why_not_fully_fused"]}
    if notes:
        lines += ["Why some kernels are not fused into one nest (from the schedule's cuts):", ""]
        lines += [f"* **{k}**: " + " | ".join(v) for k, v in notes.items()]
        lines.append("")
    return "\n".join(lines)
