"""Generated FLAME kernels vs unfused kernels, SciPy/LAPACK and NumPy, side by side.

For each case and n: (a) the generated fused kernel (``generated/<spec>.py``,
``DEFAULT``), (b) the generated single-operation kernels run one after
another, (c) the LAPACK sequence a user would write through SciPy, (d)
NumPy where it applies.  Minimum of ``--reps`` runs each, inputs copied
outside the timed region; the machine's dgemm rate is measured in the same
run and each kernel's GFLOP/s reported as a fraction of it.

    flamefuse bench kernels [--sizes 64,128,...] [--reps 5] [--cases spd_inverse,...]

Writes ``benchmarks/results/kernels.json`` and ``kernels.png`` and prints a
rich table (times in ms; ratios < 1 mean the fused kernel is faster).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.linalg.blas as blas
import scipy.linalg.lapack as lapack
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
RESULTS = ROOT / "benchmarks" / "results"
SIZES = (64, 128, 256, 512, 1024, 2048, 4096)


def spd(n: int, rng) -> np.ndarray:
    x = rng.standard_normal((n, n))
    return np.asfortranarray(x @ x.T / n + np.eye(n))


def dominant(n: int, rng) -> np.ndarray:
    x = rng.standard_normal((n, n))
    return np.asfortranarray(x + n * np.eye(n))


def nrhs(n: int) -> int:
    return min(n, 256)


@dataclass(frozen=True)
class Case:
    spec: str                                     # generated/<spec>.py holds the fused kernel
    inputs: Callable[[int, np.random.Generator], dict]
    flops: Callable[[int], float]
    unfused: tuple[tuple[str, tuple[str, ...]], ...]   # (single-op spec, operand names passed)
    lapack: tuple[str, Callable]                  # (name, function of the inputs dict)
    numpy: tuple[str, Callable] | None = None


def _potrf_potri(d):
    c, info = lapack.dpotrf(d["A"], lower=1, overwrite_a=1)
    return lapack.dpotri(c, lower=1, overwrite_c=1)


def _potrf_trtrs(key):
    def run(d):
        c, info = lapack.dpotrf(d["A"], lower=1, overwrite_a=1)
        return lapack.dtrtrs(c, d[key], lower=1, overwrite_b=1)
    return run


def _getrf_getri(d):
    lu, piv, info = lapack.dgetrf(d["A"], overwrite_a=1)
    return lapack.dgetri(lu, piv, overwrite_lu=1)


CASES = {
    "spd_inverse": Case("spd_inverse", lambda n, r: {"A": spd(n, r)}, lambda n: n ** 3,
                        (("cholesky", ("A",)), ("trinv", ("A",)), ("ltl", ("A",))),
                        ("potrf+potri", _potrf_potri), ("numpy.linalg.inv", lambda d: np.linalg.inv(d["A"]))),
    "chol_solve": Case("chol_solve", lambda n, r: {"A": spd(n, r), "b": r.standard_normal(n)},
                       lambda n: n ** 3 / 3 + n ** 2,
                       (("cholesky", ("A",)), ("trsv", ("A", "b"))), ("potrf+trtrs", _potrf_trtrs("b"))),
    "chol_trsm": Case("chol_trsm", lambda n, r: {"A": spd(n, r), "B": np.asfortranarray(r.standard_normal((n, nrhs(n))))},
                      lambda n: n ** 3 / 3 + n ** 2 * nrhs(n),
                      (("cholesky", ("A",)), ("trsm", ("A", "B"))), ("potrf+trtrs", _potrf_trtrs("B"))),
    "general_inverse": Case("general_inverse", lambda n, r: {"A": dominant(n, r)}, lambda n: 2 * n ** 3,
                            (("lu", ("A",)), ("trinv_unit", ("A",)), ("triuinv", ("A",)), ("ul", ("A",))),
                            ("getrf+getri", _getrf_getri), ("numpy.linalg.inv", lambda d: np.linalg.inv(d["A"]))),
}


def load_generated(name: str):
    path = GENERATED / f"{name}.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"flamefuse_generated_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def operand_order(spec_name: str) -> tuple[str, ...]:
    from flamefuse.spec import load
    return tuple(o.name for o in load(ROOT / "specs" / f"{spec_name}.yaml").operands)


def best_time(fn: Callable[[dict], object], make: Callable[[], dict], reps: int) -> float:
    times = []
    for _ in range(reps):
        data = make()
        t = time.perf_counter()
        fn(data)
        times.append(time.perf_counter() - t)
    return min(times)


def dgemm_rate(n: int = 2048, reps: int = 3) -> float:
    a = np.asfortranarray(np.random.default_rng(0).random((n, n)))
    blas.dgemm(1.0, a, a)
    t = best_time(lambda d: blas.dgemm(1.0, d, d), lambda: a, reps)
    return 2 * n ** 3 / t / 1e9


def fused_call(case: Case, block_size: int | None):
    module = load_generated(case.spec)
    if module is None:
        return None
    names = operand_order(case.spec)
    kw = {} if block_size is None else {"block_size": block_size}
    return lambda d: module.DEFAULT(*[d[k] for k in names], **kw)


def unfused_call(case: Case, block_size: int | None):
    steps = []
    kw = {} if block_size is None else {"block_size": block_size}
    for name, args in case.unfused:
        module = load_generated(name)
        if module is None:
            return None
        steps.append((module.DEFAULT, args))
    return lambda d: [f(*[d[a] for a in args], **kw) for f, args in steps]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench kernels")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--block-size", type=int, default=None, help="override the kernels' block size")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [CASES[c] for c in args.cases.split(",")]
    console = Console()
    rng = np.random.default_rng(0)
    peak = dgemm_rate()
    rows = []
    with Progress(console=console) as progress:
        task = progress.add_task("timing", total=len(sizes) * len(cases))
        for case in cases:
            fused, unfused = fused_call(case, args.block_size), unfused_call(case, args.block_size)
            for n in sizes:
                base = case.inputs(n, rng)
                make = lambda: {k: v.copy(order="F") for k, v in base.items()}
                row = {"case": case.spec, "n": n}
                for label, fn in (("fused", fused), ("unfused", unfused), (case.lapack[0], case.lapack[1]),
                                  *(((case.numpy[0], case.numpy[1]),) if case.numpy else ())):
                    if fn is not None:
                        fn(make())   # warm-up (JIT compile, caches)
                        row[label] = best_time(fn, make, args.reps)
                row["gflops_fused"] = case.flops(n) / row["fused"] / 1e9 if "fused" in row else None
                rows.append(row)
                progress.advance(task)
    report(console, rows, peak, cases)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "kernels.json").write_text(json.dumps({"dgemm_gflops": peak, "rows": rows}, indent=1))
    plot(rows, cases, RESULTS / "kernels.png")
    console.print(f"results: {RESULTS.relative_to(ROOT)}/kernels.json, kernels.png")
    return 0


def report(console: Console, rows: list[dict], peak: float, cases: list[Case]) -> None:
    console.print(f"dgemm rate on this machine: {peak:.1f} GFLOP/s")
    for case in cases:
        table = Table(title=f"{case.spec}: times in ms, ratio = fused / baseline")
        baselines = ["unfused", case.lapack[0]] + ([case.numpy[0]] if case.numpy else [])
        for col in ["n", "fused"] + baselines + [f"vs {b}" for b in baselines] + ["GFLOP/s", "% dgemm"]:
            table.add_column(col, justify="right")
        for r in (r for r in rows if r["case"] == case.spec):
            f = r.get("fused")
            cells = [str(r["n"]), _ms(f)] + [_ms(r.get(b)) for b in baselines]
            cells += [f"{f / r[b]:.2f}" if f and r.get(b) else "-" for b in baselines]
            g = r["gflops_fused"]
            cells += [f"{g:.1f}" if g else "-", f"{100 * g / peak:.0f}%" if g else "-"]
            table.add_row(*cells)
        console.print(table)


def _ms(t: float | None) -> str:
    return "-" if t is None else f"{1e3 * t:.2f}"


def plot(rows: list[dict], cases: list[Case], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4), squeeze=False)
    for ax, case in zip(axes[0], cases):
        mine = [r for r in rows if r["case"] == case.spec]
        for label in ["unfused", case.lapack[0]] + ([case.numpy[0]] if case.numpy else []):
            pts = [(r["n"], r["fused"] / r[label]) for r in mine if r.get("fused") and r.get(label)]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"fused / {label}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(case.spec)
        ax.set_xlabel("n")
        ax.set_ylabel("time ratio (lower is better)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
