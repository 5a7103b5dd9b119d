"""Fused tile graphs on Dask against the unfused tile graphs, dask.array.linalg and LAPACK.

    flamefuse bench dask_tiles [--n 4096] [--chunk 512] [--workers 2] [--reps 3] [--write]

On a ``distributed.LocalCluster`` (processes, ``--workers`` workers of one
thread each, one BLAS thread per worker), with the input persisted on the
workers first, each repetition runs every contender once in a fresh random
order and times ``wait(client.persist(result))`` (the result stays on the
workers, as it would on a cluster):

* SPD inverse: ``fused`` = ``flamefuse.dask.kernel("spd_inverse")`` (``fused, uncontracted``:
  ``contract=False``, one task per statement and tile); ``unfused``
  = the three graphs ``ltl(trinv(cholesky(A)))``; ``dask.array.linalg`` =
  ``L = cholesky(A, lower=True); Li = solve_triangular(L, I, lower=True); Li.T @ Li``;
  ``LAPACK`` = SciPy ``potrf`` + ``potri`` in this process (all cores' BLAS threads).
* Cholesky + solve (256 right-hand sides): ``chol_trsm`` vs ``trsm(cholesky(A), B)``
  vs ``solve_triangular(cholesky(A, lower=True), B, lower=True)`` vs ``potrf`` + ``trtrs``.

Also per graph: tasks (beyond the inputs), critical path (tasks on the
longest chain), bytes moved between workers during one run.  ``--write``
puts the table into docs/scale-out.md (between its table markers).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from flamefuse.timing import interleaved, seconds, timed

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "scale-out.md"
BEGIN, END = "<!-- dask_tiles table -->", "<!-- end dask_tiles table -->"


def contenders(n: int, chunk: int, nrhs: int):
    import dask.array as da
    import scipy.linalg.lapack as lp

    from flamefuse.dask import kernel
    fused, chol, trinv, ltl = (kernel(s) for s in ("spd_inverse", "cholesky", "trinv", "ltl"))
    chol_trsm, trsm = kernel("chol_trsm"), kernel("trsm")

    def dask_inverse(a):
        lo = da.linalg.cholesky(a, lower=True)
        li = da.linalg.solve_triangular(lo, da.eye(a.shape[0], chunks=a.chunks[0][0], dtype=a.dtype), lower=True)
        return li.T @ li

    def lapack_inverse(a):
        c, info = lp.dpotrf(a, lower=1, overwrite_a=1)
        return lp.dpotri(c, lower=1, overwrite_c=1)[0]

    def lapack_solve(ab):
        a, b = ab
        c, info = lp.dpotrf(a, lower=1, overwrite_a=1)
        return lp.dtrtrs(c, b, lower=1, overwrite_b=1)[0]

    fused_flat = kernel("spd_inverse", contract=False)
    spd = {"fused": lambda a: fused(a), "fused, uncontracted": lambda a: fused_flat(a), "unfused": lambda a: ltl(trinv(chol(a))),
           "dask.array.linalg": dask_inverse}
    solve = {"fused": lambda a, b: chol_trsm(a, b), "unfused": lambda a, b: trsm(chol(a), b),
             "dask.array.linalg": lambda a, b: da.linalg.solve_triangular(da.linalg.cholesky(a, lower=True), b,
                                                                          lower=True)}
    return spd, solve, lapack_inverse, lapack_solve


def run_once(client, out) -> float:
    """Seconds to persist ``out`` on the workers; then its result is dropped and the scheduler has
    forgotten it (the next run of the same graph, with the same keys, computes again)."""
    from dask.core import flatten
    from distributed import futures_of, wait
    keys = set(flatten(out.__dask_keys__()))

    def persist():
        persisted = client.persist(out)
        fs = [f for f in futures_of(persisted) if f.key in keys]
        del persisted
        wait(fs)
        return fs
    took, fs = timed(persist)
    del fs                       # released: the scheduler forgets the keys once no client wants them
    while client.run_on_scheduler(lambda dask_scheduler, keys=keys: any(k in dask_scheduler.tasks for k in keys)):
        time.sleep(0.05)
    return took


def measure(client, n: int, chunk: int, nrhs: int, reps: int) -> list[dict]:
    import dask.array as da
    from distributed import wait

    from flamefuse.dask.metrics import graph_stats, moved_bytes
    spd, solve, lapack_inverse, lapack_solve = contenders(n, chunk, nrhs)
    a = client.persist(da.random.default_rng(0).standard_normal((n, n), chunks=chunk))
    a = client.persist(a @ a.T / n + da.eye(n, chunks=chunk))
    b = client.persist(da.random.default_rng(1).standard_normal((n, nrhs), chunks=chunk))
    wait([a, b])
    a_np, b_np = a.compute(), b.compute()
    ref_inv, ref_sol = np.linalg.inv(a_np), np.linalg.solve(np.linalg.cholesky(a_np), b_np)
    cases = [("SPD inverse", {k: (lambda f=f: f(a)) for k, f in spd.items()}, ref_inv,
              lambda: lapack_inverse(np.array(a_np, order="F"))),
             ("Cholesky + solve", {k: (lambda f=f: f(a, b)) for k, f in solve.items()}, ref_sol,
              lambda: lapack_solve((np.array(a_np, order="F"), np.array(b_np, order="F"))))]
    rows = []
    for title, graphs, ref, lapack in cases:
        stats, moved, errors = {}, {}, {}
        for label, make in graphs.items():      # warm up (Numba compiles), check, count
            print(f"{title}: {label} ...", file=sys.stderr, flush=True)
            out = make()
            stats[label] = graph_stats(out)
            before = moved_bytes(client)
            got = client.compute(out).result()
            moved[label] = moved_bytes(client) - before
            got = np.tril(got) if title == "SPD inverse" and label == "unused" else got
            errors[label] = float(np.abs(got - ref).max() / np.abs(ref).max())
        lapack()
        measures = {label: (lambda make=make: run_once(client, make())) for label, make in graphs.items()}
        measures["LAPACK"] = lambda: seconds(lapack)
        best = interleaved(measures, reps, seed=len(rows), pause=0.2)
        for label in best:
            rows.append({"case": title, "graph": label, "time": best[label],
                         "tasks": stats[label].tasks if label in stats else None,
                         "critical": stats[label].critical_path if label in stats else None,
                         "moved": moved.get(label), "error": errors.get(label),
                         "vs_fused": best[label] / best["fused"]})
    return rows


def table(rows, n, chunk, workers, reps) -> list[str]:
    load = os.getloadavg()
    out = [f"n = {n}, chunks {chunk} x {chunk} ({-(-n // chunk)} x {-(-n // chunk)} tiles), LocalCluster of "
           f"{workers} worker processes x 1 thread (1 BLAS thread each), LAPACK in one process with "
           f"OpenBLAS's default threads; min of {reps} repetitions in random order; measured "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
           f"{load[0]:.1f} / {load[1]:.1f} on {os.cpu_count()} cores.", "",
           "| case | graph | time (s) | time / fused | tasks | critical path | MB moved between workers | max rel. error |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        cells = [r["case"], r["graph"], f"{r['time']:.2f}", f"{r['vs_fused']:.2f}",
                 "" if r["tasks"] is None else str(r["tasks"]),
                 "" if r["critical"] is None else str(r["critical"]),
                 "" if r["moved"] is None else f"{r['moved'] / 1e6:.0f}",
                 "" if r["error"] is None else f"{r['error']:.1e}"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench dask_tiles")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--chunk", type=int, default=512)
    ap.add_argument("--nrhs", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="put the table into docs/scale-out.md")
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      env=env) as cluster, Client(cluster) as client:
        rows = measure(client, args.n, args.chunk, args.nrhs, args.reps)
    lines = table(rows, args.n, args.chunk, args.workers, args.reps)
    print("\n".join(lines))
    if args.write:
        text = DOC.read_text()
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        DOC.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail)
    return 0
