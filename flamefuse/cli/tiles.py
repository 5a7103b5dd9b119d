"""``flamefuse tiles SPEC --n N --chunk C``: a fused tile graph run on Dask, checked.

Makes random operands of the spec's structure as Dask arrays with ``C x C``
chunks (symmetric: SPD; lower / upper: a well-conditioned triangle; general:
diagonally dominant; row-partitioned matrices ``--rhs`` columns; vectors),
builds the graph of :func:`flamefuse.dask.kernel` (``--variant``), runs it on

* a new ``distributed.LocalCluster`` with one single-threaded worker process
  per core (default; ``--workers`` to choose),
* ``--scheduler ADDRESS`` (``tcp://host:8786``): an existing cluster,
* ``--scheduler threads|processes|sync``: Dask's local schedulers,

and prints the loop body, tiles, tasks, critical path, time and the largest
error relative to the generated module's SciPy-style function on the same
operands (``--no-check`` skips it).  ``--svg FILE`` draws the tile graph.
Errors (unknown spec, a variant that pivots across tiles, bad sizes) leave as
one message with exit code 2.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from flamefuse.errors import FlameError, fail

LOCAL = ("threads", "processes", "sync", "synchronous", "single-threaded")


def operands(problem, n: int, chunk: int, rhs: int, seed: int = 0) -> list:
    import dask.array as da
    rng = da.random.default_rng(seed)
    eye = da.eye(n, chunks=chunk)
    out = []
    for o in problem.operands:
        if o.kind == "vector":
            out.append(rng.standard_normal(n, chunks=chunk))
        elif o.partition != "2x2":
            shape = (n, rhs) if o.partition == "rows" else (rhs, n)
            out.append(rng.standard_normal(shape, chunks=chunk))
        else:
            m = rng.standard_normal((n, n), chunks=chunk)
            out.append({"symmetric": m @ m.T / n + eye, "lower": da.tril(m) / n + 2 * eye,
                        "upper": da.triu(m) / n + 2 * eye}.get(o.structure, m / n + 2 * eye))
    return out


def reference(problem, variant: str, inputs) -> list | None:
    from flamefuse.shipped import kernel
    mod = kernel(problem.name)
    if mod is None:
        return None
    out = getattr(mod, problem.name)(*inputs, variant=variant)
    return list(out) if isinstance(out, tuple) else [out]


def run(args) -> int:
    import numpy as np

    from flamefuse.dask.graph import kernel
    from flamefuse.dask.metrics import graph_stats
    from flamefuse.dask.picture import plan_svg
    if args.n < 1 or args.chunk < 1:
        fail(f"--n and --chunk must be positive, got --n {args.n} --chunk {args.chunk}")
    try:
        k = kernel(args.spec, args.variant)
    except ValueError as err:
        fail(str(err))
    client = cluster = None
    try:
        import dask
        if args.scheduler in LOCAL:
            get = {"scheduler": args.scheduler}
            where = f"Dask's {args.scheduler} scheduler"
        else:
            from distributed import Client, LocalCluster
            if args.scheduler:
                try:
                    client = Client(args.scheduler, timeout="5s")
                except (OSError, TimeoutError) as err:
                    fail(f"cannot reach the Dask scheduler at {args.scheduler}: {err}",
                         hint="start one (`dask scheduler` and `dask worker ADDRESS`) or leave out --scheduler")
                where = f"the cluster at {args.scheduler}"
            else:
                workers = args.workers or os.cpu_count() or 1
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, env={"OPENBLAS_NUM_THREADS": "1"})
                client = Client(cluster)
                where = f"a LocalCluster of {workers} worker process(es) x 1 thread"
            get = {}
        ins = operands(k.problem, args.n, args.chunk, args.rhs)
        ins = dask.persist(*ins, **get)
        outs = k.graph(*ins)
        plan, stats = k.plan(*ins), graph_stats(*outs)
        print(f"{k.variant} ({k.ir.direction}), {plan.tiles} x {plan.tiles} tiles of {args.chunk}, on {where}")
        print("\n".join("  " + line for line in k.ir.doc))
        print(f"tile tasks: {len(plan.tasks)}, graph tasks {stats.tasks}, critical path {stats.critical_path}")
        t = time.perf_counter()
        got = dask.compute(*outs, **get)
        print(f"time: {time.perf_counter() - t:.3f} s (including gathering the result)")
        if not args.no_check:
            ref = reference(k.problem, k.variant, [np.asarray(x) for x in dask.compute(*ins, **get)])
            if ref is None:
                print("check: no generated module for this spec")
            else:
                err = max(float(np.abs(g - r).max() / max(np.abs(r).max(), 1e-300)) for g, r in zip(got, ref))
                print(f"max error relative to flamefuse.kernels.{k.problem.name}: {err:.2e}")
        if args.svg:
            Path(args.svg).write_text(plan_svg(plan))
            print(f"tile graph: {args.svg}")
    except FlameError:
        raise
    except (ValueError, TypeError, np.linalg.LinAlgError) as err:
        fail(str(err))
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    return 0


def register(sub) -> None:
    p = sub.add_parser("tiles", help="run a spec's fused loop as a Dask tile task graph")
    p.add_argument("spec", help="a shipped spec name (spd_inverse) or a YAML spec path")
    p.add_argument("--n", type=int, default=1024, help="matrix order (default 1024)")
    p.add_argument("--chunk", type=int, default=256, help="square chunk = block size (default 256)")
    p.add_argument("--variant", default=None, help="variant name or number (default: the module's DEFAULT)")
    p.add_argument("--rhs", type=int, default=64, help="columns of row-partitioned operands (default 64)")
    p.add_argument("--scheduler", default=None,
                   help="ADDRESS of a running cluster, or threads / processes / sync (default: a new LocalCluster)")
    p.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: the cores)")
    p.add_argument("--no-check", action="store_true", help="skip the comparison with the generated module")
    p.add_argument("--svg", default=None, help="draw the tile graph into this SVG file")
    p.set_defaults(func=run)
