"""Clustering with filters: ILP solve times and clustered execution speed.

``flamefuse bench cluster [--quick] [--seeds K] [--elements N]``

1. CP-SAT (and HiGHS for the smaller sizes) solve time of the clustering ILP
   on random programs of 25, 50 and 100 combinators (the paper: GLPK took
   over 20 minutes at 25; targets here: < 1 s at 25, < 10 s at 100).
2. normalize2 on N elements (default 10^7): hand-written whole-array NumPy
   (the baseline; one pass per combinator) and the naive evaluator against Numba code for the unfused, pull-stream,
   Megiddo-style and optimal clusterings, loops and times side by side.
3. A filter and reductions over it in ``flamefuse.lazy`` on N elements
   (:data:`FILTER_PROGRAM`; the runtime clusters the recorded segment into
   one loop) against the same code in eager NumPy, alternated in one process.

Writes ``benchmarks/results/cluster.json`` and ``docs/cluster-performance.md``.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from flamefuse.cluster import build, cluster, compile_program, evaluate, parse_text
from flamefuse.cluster.randprog import random_program
from flamefuse.cluster.solve import build_model, solve_cpsat, solve_milp
from flamefuse.timing import best_of, seconds, side_by_side

ROOT = Path(__file__).resolve().parent.parent
NORMALIZE2 = """param array xs
sum1 = fold {} xs
gts  = filter {} xs : xs > 0
sum2 = fold {} gts
ys1  = map {sum1} xs : xs / sum1
ys2  = map {sum2} xs : xs / sum2
return ys1 ys2
"""

NOTE = ("CP-SAT uses one worker up to 40 combinators and a 4-worker portfolio above (on this "
        "2-core machine 4 workers beat 8: over 12 random programs of 100 combinators the "
        "slowest took 7.3 s with 4 workers and 13.8 s with 8). Solve times vary a lot between "
        "random programs of one size; the max column is the slowest of them.")


FILTER_NOTE = (
    "`x[mask]` in `flamefuse.lazy` is recorded as a filter whose length is known only after "
    "it runs (`flamefuse.lazy.selection`). A recorded stage that contains one is converted into "
    "a combinator program (elementwise ops → `map`, the selection → `filter`, full "
    "reductions → `fold`, anything else → `external`, run by the ordinary runtime), "
    "clustered by this ILP and run one Numba loop per cluster (`flamefuse.runtime.filters`); "
    "`partitioner=\"cluster\"` "
    "does this for every stage. Below, the mask, the selection and the three reductions run in "
    "one loop and neither the mask nor `y` is written to memory; NumPy makes six passes "
    "(mask, selection, sum, max, `y * 2`, mean). Measured alternately in one process, best of "
    "the repeats, on a shared 2-core machine.")


def solver_rows(sizes, seeds, highs_up_to):
    rows = []
    for n in sizes:
        cp, hi = [], []
        for seed in range(seeds):
            model = build_model(build(random_program(n, seed)))
            cp.append(seconds(solve_cpsat, model))
            if n <= highs_up_to:
                hi.append(seconds(solve_milp, model, time_limit=120))
        rows.append({"combinators": n, "programs": seeds, "variables": len(model.variables),
                     "cpsat_median_s": statistics.median(cp), "cpsat_max_s": max(cp),
                     "highs_median_s": statistics.median(hi) if hi else None})
    return rows


FILTER_PROGRAM = "y = x[x > 0]; s = y.sum(); m = y.max(); c = (y * 2).mean()"


def filter_program(mod, x):
    """:data:`FILTER_PROGRAM` with ``mod`` (numpy or flamefuse.lazy); ``y`` dies inside."""
    y = x[x > 0]
    s, m, c = y.sum(), y.max(), (y * 2).mean()
    del y
    return float(s), float(m), float(c)


def filter_rows(elements, repeat):
    """Eager NumPy against flamefuse.lazy on :data:`FILTER_PROGRAM`, measured alternately."""
    import flamefuse.lazy as lazy
    from flamefuse.runtime import filters
    xs = np.random.default_rng(1).standard_normal(elements)
    lx = lazy.asarray(xs)
    want = filter_program(np, xs)
    filters.STATS.clear()
    np.testing.assert_allclose(filter_program(lazy, lx), want, rtol=1e-9)
    loops = filters.STATS["loops"]
    best = side_by_side({"numpy": (lambda: filter_program(np, xs), None),
                         "lazy": (lambda: filter_program(lazy, lx), None)}, repeat, seed=None)
    return [{"variant": "eager NumPy (baseline)", "passes": 6, "seconds": best["numpy"]},
            {"variant": "flamefuse.lazy (clustered)", "passes": loops, "seconds": best["lazy"]}]


def numpy_normalize2(xs):
    """normalize2 written by hand in NumPy: one whole-array pass per combinator."""
    sum1 = xs.sum()
    sum2 = xs[xs > 0].sum()
    return xs / sum1, xs / sum2


def execution_rows(elements, repeat):
    program = parse_text(NORMALIZE2)
    xs = np.random.default_rng(0).standard_normal(elements)
    inputs = {"xs": xs}
    base = best_of(lambda: numpy_normalize2(xs), repeat)
    rows = [{"clustering": "unfused NumPy (baseline)", "loops": 5, "seconds": base},
            {"clustering": "naive evaluator (NumPy)", "loops": 5,
             "seconds": best_of(lambda: evaluate(program, inputs), repeat)}]
    want = evaluate(program, inputs)
    for method, parallel in (("unfused", False), ("stream", False), ("megiddo", False), ("ilp", False),
                             ("ilp", True)):
        result = cluster(program, method)
        compiled = compile_program(result, parallel=parallel)
        got = compiled.run(inputs)
        for r in program.returns:
            np.testing.assert_allclose(got[r], want[r], rtol=1e-9)
        took = best_of(lambda: compiled.run(inputs), repeat)
        rows.append({"clustering": f"{method} (Numba{', parallel' if parallel else ''})",
                     "loops": len(result.clusters), "objective": result.objective, "seconds": took})
    for row in rows:
        row["speedup_vs_numpy"] = base / row["seconds"]
    return rows


def markdown(solve, run, elements, filtered=()) -> str:
    lines = ["# Clustering with filters: performance", "",
             "Generated by `flamefuse bench cluster`.", "",
             "## ILP solve time on random programs", "",
             "| combinators | programs | ILP variables (last) | CP-SAT median s | CP-SAT max s "
             "| HiGHS median s |", "| --- | --- | --- | --- | --- | --- |"]
    tail = ["", NOTE]
    for r in solve:
        hi = f"{r['highs_median_s']:.3f}" if r["highs_median_s"] is not None else "—"
        lines.append(f"| {r['combinators']} | {r['programs']} | {r['variables']} | "
                     f"{r['cpsat_median_s']:.3f} | {r['cpsat_max_s']:.3f} | {hi} |")
    lines += tail + ["", f"## normalize2 on {elements:,} elements (baseline: unfused NumPy)", "",
              "| clustering | loops | objective | best time s | speed-up vs NumPy |",
              "| --- | --- | --- | --- | --- |"]
    for r in run:
        lines.append(f"| {r['clustering']} | {r['loops']} | {r.get('objective', '—')} | "
                     f"{r['seconds']:.4f} | {r['speedup_vs_numpy']:.2f}× |")
    if filtered:
        base = filtered[0]["seconds"]
        lines += ["", f"## Filters in flamefuse.lazy on {elements:,} elements", "",
                  FILTER_NOTE, "", f"`{FILTER_PROGRAM}`", "",
                  "| variant | passes over the data | best time s | speed-up vs NumPy |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {r['variant']} | {r['passes']} | {r['seconds']:.4f} | "
                  f"{base / r['seconds']:.2f}× |" for r in filtered]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench cluster")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--seeds", type=int, default=12, help="random programs per size")
    ap.add_argument("--elements", type=int, default=10**7)
    args = ap.parse_args(argv)
    sizes = (10, 25) if args.quick else (25, 50, 100)
    elements = 10**5 if args.quick else args.elements
    solve = solver_rows(sizes, args.seeds, highs_up_to=25)
    run = execution_rows(elements, repeat=3 if args.quick else 5)
    filtered = filter_rows(elements, repeat=3 if args.quick else 9)

    console = Console()
    t1 = Table(title="Clustering ILP solve time (random programs)")
    for col in ("combinators", "programs", "variables", "CP-SAT median s", "CP-SAT max s",
                "HiGHS median s"):
        t1.add_column(col, justify="right")
    for r in solve:
        hi = f"{r['highs_median_s']:.3f}" if r["highs_median_s"] is not None else "—"
        t1.add_row(str(r["combinators"]), str(r["programs"]), str(r["variables"]),
                   f"{r['cpsat_median_s']:.3f}", f"{r['cpsat_max_s']:.3f}", hi)
    console.print(t1)
    t2 = Table(title=f"normalize2, {elements:,} elements (baseline: unfused NumPy)")
    for col in ("clustering", "loops", "objective", "best s", "vs NumPy"):
        t2.add_column(col, justify="right")
    for r in run:
        t2.add_row(r["clustering"], str(r["loops"]), str(r.get("objective", "—")),
                   f"{r['seconds']:.4f}", f"{r['speedup_vs_numpy']:.2f}×")
    console.print(t2)
    t3 = Table(title=escape(f"{FILTER_PROGRAM}, {elements:,} elements"))
    for col in ("variant", "passes", "best s", "vs NumPy"):
        t3.add_column(col, justify="right")
    for r in filtered:
        t3.add_row(r["variant"], str(r["passes"]), f"{r['seconds']:.4f}",
                   f"{filtered[0]['seconds'] / r['seconds']:.2f}×")
    console.print(t3)

    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "cluster.json").write_text(json.dumps({"solve": solve, "run": run,
                                                  "filter": filtered,
                                                  "elements": elements}, indent=2))
    if not args.quick:
        (ROOT / "docs").mkdir(exist_ok=True)
        (ROOT / "docs" / "cluster-performance.md").write_text(
            markdown(solve, run, elements, filtered))
    return 0
