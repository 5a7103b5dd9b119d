"""Fused kernels per chunk (flamefuse.dask.optimize) against Dask's own optimisation.

    flamefuse bench dask_fuse [--n 8e6] [--chunk 1e6] [--reps 5] [--write]

Black-Scholes (the formula of ``benchmarks/runtime.py``: log, sqrt, exp and the
polynomial normal CDF) written with ``dask.array`` on ``--n`` prices in
``--chunk`` chunks, persisted in memory first; on Dask's threaded scheduler
(the machine's cores), each repetition in a fresh random order times:

* ``dask``: ``dask.compute(x)`` with Dask's own optimisation (blockwise fusion:
  one task per chunk running the NumPy operations one after another);
* ``flamefuse.dask.optimize``: the arrays returned by ``optimize(x)``;
* ``array_optimize hook``: ``dask.config.set(array_optimize=optimize_graph)``.

for the price array and for its mean (a tree reduction of fused per-chunk
partial sums).  The results are compared (largest relative difference).
``--write`` puts the table into docs/scale-out.md.
"""
from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "scale-out.md"
BEGIN, END = "<!-- dask_fuse table -->", "<!-- end dask_fuse table -->"
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
X, R, V, T = 65.0, 0.08, 0.3, 1.0


def _cnd(da, x):
    l = da.abs(x)
    k = 1.0 / (1.0 + 0.2316419 * l)
    w = 1.0 - 1.0 / math.sqrt(2 * math.pi) * da.exp(-l * l / 2.0) * (
        A1 * k + A2 * k ** 2 + A3 * k ** 3 + A4 * k ** 4 + A5 * k ** 5)
    m = x < 0
    return w * ~m + (1.0 - w) * m


def black_scholes(da, s):
    d1 = (da.log(s / X) + (R + V * V / 2.0) * T) / (V * math.sqrt(T))
    d2 = d1 - V * math.sqrt(T)
    return s * _cnd(da, d1) - X * math.exp(-R * T) * _cnd(da, d2)


def main(argv: list[str]) -> int:
    import dask
    import dask.array as da
    import numpy as np

    from flamefuse.dask import optimize, optimize_graph
    from flamefuse.timing import side_by_side
    ap = argparse.ArgumentParser(prog="flamefuse bench dask_fuse")
    ap.add_argument("--n", type=float, default=8e6)
    ap.add_argument("--chunk", type=float, default=1e6)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    n, chunk = int(args.n), int(args.chunk)
    (s,) = dask.persist(da.random.default_rng(0).uniform(10.0, 100.0, n, chunks=chunk), scheduler="threads")
    price = black_scholes(da, s)
    mean = price.mean()
    rows = []
    for label, x in (("price array", price), ("mean price", mean)):
        (fused,) = optimize(x)

        def hook(x=x):
            with dask.config.set(array_optimize=optimize_graph):
                return dask.compute(x, scheduler="threads")[0]
        calls = {"dask": lambda x=x: dask.compute(x, scheduler="threads")[0],
                 "flamefuse.dask.optimize": lambda f=fused: dask.compute(f, scheduler="threads")[0],
                 "array_optimize hook": hook}
        results = {k: f() for k, f in calls.items()}          # warm up: kernels compiled or loaded
        best = side_by_side({k: (f, None) for k, f in calls.items()}, args.reps, pause=0.2)
        ref = np.asarray(results["dask"])
        for k in calls:
            diff = float(np.max(np.abs(np.asarray(results[k]) - ref)) / max(float(np.max(np.abs(ref))), 1e-300))
            rows.append((label, k, best[k], best["dask"] / best[k], diff))
    load = os.getloadavg()
    lines = [f"Black-Scholes on {n:.0e} prices in chunks of {chunk:.0e}, Dask's threaded scheduler "
             f"({os.cpu_count()} cores), min of {args.reps} repetitions in random order; measured "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load[0]:.1f} / {load[1]:.1f}.", "",
             "| result | optimisation | time (s) | speed-up over Dask's | max rel. difference |",
             "|---|---|---:|---:|---:|"]
    lines += [f"| {a} | {b} | {t:.3f} | {x:.2f} | {d:.1e} |" for a, b, t, x, d in rows]
    print("\n".join(lines))
    if args.write:
        text = DOC.read_text()
        head, rest = text.split(BEGIN, 1)
        DOC.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + rest.split(END, 1)[1])
    return 0
