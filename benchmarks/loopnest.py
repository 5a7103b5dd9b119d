"""Fused matrix-vector kernels (flamefuse.loopnest) vs eager NumPy/BLAS, in one run.

For each kernel and size n (square n x n matrices, float64): the eager
NumPy version (BLAS gemv calls plus temporaries), the fused Numba kernel
(``reorder_float=True``, unroll-and-jam by ``UNROLL`` rows), the same
without unroll-and-jam (``unroll=1``) and the exact-order kernel
(``reorder_float=False``) are timed alternately, min of ``--reps`` runs
each, after a warm-up (compile excluded), each run after ``PAUSE`` seconds of
rest: OpenBLAS's threads keep spinning for a while after a call, and a
two-thread kernel timed right after a gemv got about one core.  A second pass runs in a child
process with one thread on both sides (``OPENBLAS_NUM_THREADS=1`` and
friends in its environment, ``numba.set_num_threads(1)``): one-thread ratios
suffer much less from other jobs on a shared machine.

Achieved bandwidth counts the matrix bytes the fused schedule must read
(every matrix once per top-level nest that touches it) over the fused time,
as a fraction of the measured read bandwidth: a parallel Numba sum over an
n x n array, the ceiling of a loop that reads each matrix element once.
Targets (n = 4000..8000): BiCG, MVT >= 1.6x, GESUMMV >= 1.3x.

    flamefuse bench loopnest [--sizes 4000,8000] [--reps 11] [--kernels bicg,mvt]
                             [--threading-layer workqueue|omp|tbb|default] [--no-one-thread]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange
from rich.console import Console
from rich.table import Table

from flamefuse.loopnest import KERNELS, fuse_program
from flamefuse.loopnest.codegen import UNROLL
from flamefuse.loopnest.parallel import statements
from flamefuse.timing import best_of, side_by_side

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"bicg": 1.6, "mvt": 1.6, "gesummv": 1.3}
# seconds of rest before each timed run: OpenBLAS's threads spin for a while after a
# call and, timed right after one, a 2-thread Numba kernel gets about one core
PAUSE = 0.25
EAGER_SWEEPS = {"bicg": 2, "mvt": 2, "gesummv": 2, "atax": 2}   # n x n matrix reads of eager NumPy
ONE_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


@njit(fastmath=True, cache=True)
def _sum_rows(a, lo, hi):
    total = 0.0
    for k in range(lo, hi):
        row = a[k]
        for c in range(row.shape[0]):
            total += row[c]
    return total


@njit(parallel=True, cache=True)
def _sum(a, nt):
    part = np.zeros(nt)
    for t in prange(nt):
        part[t] = _sum_rows(a, (t * a.shape[0]) // nt, ((t + 1) * a.shape[0]) // nt)
    return part.sum()


def read_bandwidth(n: int, reps: int) -> float:
    """Bytes per second of a parallel sum over an n x n float64 array."""
    a = np.random.default_rng(0).standard_normal((n, n))
    nt = numba.get_num_threads()
    _sum(a, nt)
    return a.nbytes / best_of(lambda: _sum(a, nt), reps)


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


def measure(name: str, n: int, reps: int, rng, exact_too: bool = True) -> dict:
    """Alternating min-of-``reps`` times (s) at the current thread settings."""
    build, eager, make = KERNELS[name]
    variants = {"eager_s": eager, "fused_s": fuse_program(build(), reorder_float=True),
                "nojam_s": fuse_program(build(), reorder_float=True, unroll=1)}
    if exact_too:
        variants["exact_s"] = fuse_program(build(), reorder_float=False)
    inputs = make(n, rng)
    for fn in variants.values():
        fn(**_fresh(inputs))
    # alternate, so load changes hit all variants alike; a pause lets the previous variant's
    # threads go idle (OpenBLAS spins); the fresh copies are timed with the call, as before
    return side_by_side({key: (lambda fn=fn: fn(**_fresh(inputs)), None) for key, fn in variants.items()},
                        reps, seed=None, pause=PAUSE)


def one_thread(args) -> dict:
    """``{(kernel, n): times}`` from a child process with one BLAS and one Numba thread."""
    env = dict(os.environ, **{k: "1" for k in ONE_THREAD_ENV})
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--sizes", args.sizes,
           "--reps", str(args.reps), "--kernels", args.kernels,
           "--threading-layer", args.threading_layer]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    rows = json.loads(done.stdout.splitlines()[-1])
    return {(r["kernel"], r["n"]): r for r in rows}


def worker(args) -> int:
    """The child of :func:`one_thread`: prints its rows as one JSON line."""
    numba.set_num_threads(1)
    rng = np.random.default_rng(0)
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        bw = read_bandwidth(n, args.reps)
        for name in args.kernels.split(","):
            rows.append({"kernel": name, "n": n, "read_GBs": bw / 1e9,
                         **measure(name, n, args.reps, rng, exact_too=False)})
    print(json.dumps(rows))
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench loopnest")
    ap.add_argument("--sizes", default="4000,8000")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--threading-layer", default="workqueue", choices=("workqueue", "omp", "tbb", "default"),
                    help="Numba threading layer (set before the first parallel kernel runs)")
    ap.add_argument("--no-one-thread", action="store_true", help="skip the one-thread child run")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    numba.config.THREADING_LAYER = args.threading_layer
    if args.worker:
        return worker(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    console = Console(width=220)
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()[0]
    single = {} if args.no_one_thread else one_thread(args)
    rows = []
    for n in sizes:
        bw = read_bandwidth(n, args.reps)
        for name in args.kernels.split(","):
            console.print(f"[dim]{name} n={n}[/dim]")
            fast = fuse_program(KERNELS[name][0](), reorder_float=True)
            row = {"kernel": name, "n": n, **measure(name, n, args.reps, rng)}
            row["bytes"], row["sweeps"] = traffic(fast, n)
            row["nests"] = len(fast.schedule.roots)
            row["parallel"] = [pl.parallel for pl in fast.plans.values()]
            row["why_not_fully_fused"] = fast.schedule.explain(fast.program)
            row["read_GBs"] = bw / 1e9
            row["fused_GBs"] = row["bytes"] / row["fused_s"] / 1e9
            row["one_thread"] = single.get((name, n))
            rows.append(row)
    meta = {"threads": numba.get_num_threads(), "cpus": os.cpu_count(), "unroll": UNROLL,
            "threading_layer": numba.threading_layer(),
            "load_before": load_before, "load_after": os.getloadavg()[0],
            "numpy": np.__version__, "numba": numba.__version__, "reps": args.reps}
    console.print(render(rows, meta))
    for row in rows:
        if row["why_not_fully_fused"]:
            console.print(f"[bold]{row['kernel']}[/bold] n={row['n']}: " +
                          " | ".join(row["why_not_fully_fused"]))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "loopnest.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    (ROOT / "docs" / "loopnest-performance.md").write_text(markdown(rows, meta))
    return 0


COLUMNS = ("kernel", "n", "NumPy [ms]", "fused [ms]", "speedup", "target", "no jam [ms]",
           "exact-fp [ms]", "NumPy 1T [ms]", "fused 1T [ms]", "1T speedup", "no jam 1T [ms]",
           "nests", "matrix sweeps", "fused GB/s", "of read BW")
LEFT = ("kernel", "target", "matrix sweeps")


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def _cells(r):
    target = TARGETS.get(r["kernel"])
    verdict = "" if target is None else f">= {target} " + ("met" if r["eager_s"] / r["fused_s"] >= target
                                                          else "missed")
    one = r.get("one_thread")
    single = (ms(one["eager_s"]), ms(one["fused_s"]), f"{one['eager_s'] / one['fused_s']:.2f}x",
              ms(one["nojam_s"])) if one else ("", "", "", "")
    return (r["kernel"], str(r["n"]), ms(r["eager_s"]), ms(r["fused_s"]),
            f"{r['eager_s'] / r['fused_s']:.2f}x", verdict, ms(r["nojam_s"]), ms(r["exact_s"]),
            *single, str(r["nests"]), r["sweeps"], f"{r['fused_GBs']:.1f}",
            f"{r['fused_GBs'] / r['read_GBs']:.0%}")


def render(rows, meta) -> Table:
    table = Table(title=f"loop-nest fusion vs eager NumPy/BLAS ({meta['threads']} Numba threads, "
                        f"min of {meta['reps']}; read bandwidth {rows[0]['read_GBs']:.1f} GB/s)")
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in LEFT else "right")
    for r in rows:
        table.add_row(*_cells(r))
    return table


def _bandwidths(rows, meta) -> str:
    parts = []
    for n in sorted({r["n"] for r in rows}):
        r = next(x for x in rows if x["n"] == n)
        one = f", 1 thread {r['one_thread']['read_GBs']:.1f} GB/s" if r.get("one_thread") else ""
        parts.append(f"n={n}: {meta['threads']} threads {r['read_GBs']:.1f} GB/s{one}")
    return "; ".join(parts)


def _streams(rows, meta) -> list[str]:
    """Matrix read bandwidth of eager NumPy (OpenBLAS gemv) and of the fused kernel."""
    out = ["| kernel | n | NumPy GB/s | fused GB/s | NumPy 1T GB/s | fused 1T GB/s | 1T read BW GB/s |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if r["kernel"] not in EAGER_SWEEPS:
            continue
        eager = EAGER_SWEEPS[r["kernel"]] * r["n"] ** 2 * 8
        one = r.get("one_thread")
        single = (f"{eager / one['eager_s'] / 1e9:.1f}", f"{r['bytes'] / one['fused_s'] / 1e9:.1f}",
                  f"{one['read_GBs']:.1f}") if one else ("", "", "")
        out.append(f"| {r['kernel']} | {r['n']} | {eager / r['eager_s'] / 1e9:.1f} | "
                   f"{r['fused_GBs']:.1f} | " + " | ".join(single) + " |")
    return ["Matrix bytes read per second: eager NumPy sweeps an n x n matrix twice in each",
            "of these kernels (A twice for BiCG, MVT and ATAX; A and B once for GESUMMV), the",
            "fused kernel once per matrix:", ""] + out + [""]


def markdown(rows, meta) -> str:
    lines = ["# Loop-nest fusion performance", "",
             "`flamefuse bench loopnest` (generated by the benchmark; baseline: eager NumPy "
             f"{meta['numpy']} with OpenBLAS gemv, same run; Numba {meta['numba']} with "
             f"{meta['threads']} threads ({meta['threading_layer']} layer) on {meta['cpus']} CPUs; "
             f"unroll-and-jam by {meta['unroll']} rows; min of {meta['reps']} alternating runs, "
             f"each after {PAUSE} s of rest; "
             f"load average {meta['load_before']:.1f} before, {meta['load_after']:.1f} after).", "",
             "| " + " | ".join(COLUMNS) + " |",
             "| " + " | ".join("---" if c in LEFT else "---:" for c in COLUMNS) + " |"]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    lines += ["", f"Read bandwidth (parallel Numba sum over the n x n matrix): {_bandwidths(rows, meta)}.", ""]
    lines += _streams(rows, meta)
    lines += [
        "Columns: *fused* is `fuse_program(..., reorder_float=True)`: parallel outer loop,",
        "one contiguous block of rows per thread, reductions along it privatised per thread,",
        "`fastmath` reassociation, and unroll-and-jam: each inner-loop pass serves",
        f"{meta['unroll']} rows, so a privatised accumulator such as `s[j]` of `s = A^T r` is",
        "loaded and stored once per block instead of once per row, and the row dot products",
        "stay in registers.  *no jam* is the same kernel with `unroll=1` (the code before",
        "unroll-and-jam).  *exact-fp* is `reorder_float=False` (same fusion, program",
        "summation order, so sequential wherever a float reduction is carried).  *1T*",
        "columns come from a child process with one BLAS thread (`OPENBLAS_NUM_THREADS=1`)",
        "and `numba.set_num_threads(1)`.  *matrix sweeps*: how many top-level nests of the",
        "fused schedule touch each matrix (eager NumPy sweeps A twice for BiCG/MVT/ATAX).",
        "*fused GB/s* = those matrix bytes / fused time; *of read BW* is its fraction of",
        "the read bandwidth above.",
        "",
        f"Every timed run starts after {PAUSE} s of rest.  OpenBLAS's threads keep spinning",
        "for a while after each call; a two-thread fused kernel started right after a gemv",
        "ran on about one core (BiCG n=8000: 43 ms instead of 21 ms).  Applications that",
        "interleave BLAS calls with fused kernels can shorten that spin with OpenBLAS's",
        "`OPENBLAS_THREAD_TIMEOUT`.",
        "",
        "The machine has 2 cores shared with other jobs: when the load average exceeds 2,",
        "the parallel kernels lose whole time slices at their barrier and the multi-thread",
        "ratios are unreliable; the one-thread ratios are far more stable.  The default",
        "threading layer is `workqueue`: with `omp` (Numba's default here) the OpenMP",
        "threads spin between parallel regions and lose to other jobs on a loaded machine",
        "(`--threading-layer omp` to compare).", "",
        "BiCG, MVT and ATAX halve the matrix traffic (one sweep of A instead of two), so 2x",
        "is their memory-bound ideal.  On one thread the fused kernels read A about as fast",
        "as one OpenBLAS gemv thread does and close to the read bandwidth of the core (the",
        "GB/s table), so their one-thread ratios sit near that 2x: the generated loop has",
        "nothing left to gain there.  With two threads the ratio also depends on what the",
        "other jobs leave of the second core and of the memory system: a time slice lost at",
        "the fused kernel's end-of-loop barrier costs the whole kernel a slice, and NumPy's",
        "own two-thread time can exceed its one-thread time in the same run.",
        "",
        "GESUMMV has no traffic to save against BLAS (eager NumPy also reads A and B once",
        "each).  Both versions stream at about the read bandwidth (GB/s table), so the ratio",
        "is bounded by fused over OpenBLAS bandwidth, about 1.0-1.1x: the 1.3x target is",
        "out of reach on this machine for any schedule that reads A and B from memory.", ""]
    notes = {f"{r['kernel']}": r["why_not_fully_fused"] for r in rows if r["why_not_fully_fused"]}
    if notes:
        lines += ["Why some kernels are not fused into one nest (from the schedule's cuts):", ""]
        lines += [f"* **{k}**: " + " | ".join(v) for k, v in notes.items()]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
