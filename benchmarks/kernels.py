"""Generated FLAME kernels vs unfused kernels, SciPy/LAPACK and NumPy, side by side.

For each case and n: (a) the generated fused kernel (``generated/<spec>.py``,
``DEFAULT``), (b) the generated single-operation kernels run one after
another, (c) the LAPACK sequence a user would write through SciPy, (d)
NumPy where it applies.  The contenders are interleaved (each repetition
runs every contender once, on fresh copies made outside the timed region,
with a pause where the BLAS library changes: see ``interleaved``) and the
minimum of ``--reps`` repetitions is kept, so that ratios are
measured side by side even on a busy machine.  Before timing, the fused
result is checked against the LAPACK one (relative error in the JSON, and a
failure aborts).  The machine's dgemm rate is measured in the same run (n =
2048, before and after; the larger is used) and each fused kernel's GFLOP/s
is reported as a fraction of it.

Block sizes: per n and kernel, by the short autotune of
:mod:`flamefuse.codegen.tune` (keyed by the kernel's source hash, cached per machine in
``$FLAMEFUSE_CACHE_DIR/codegen`` or ``~/.cache/flamefuse/codegen``), the same for fused and
unfused kernels; ``--block-size NB`` uses NB everywhere instead.

    flamefuse bench kernels [--sizes 64,128,...] [--reps 5] [--cases spd_inverse,...]
                            [--block-size NB] [--docs docs/performance.md]

Writes ``benchmarks/results/kernels.json`` and ``kernels.png``, prints a rich
table per case (times in ms; ratios < 1 mean the fused kernel is faster) and
replaces the table between the ``<!-- kernels:begin -->`` and
``<!-- kernels:end -->`` markers of ``--docs`` (if the file has them).
The BLAS thread count is OpenBLAS's: set ``OPENBLAS_NUM_THREADS`` before
starting to change it (it is recorded in the JSON).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
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

from flamefuse.codegen import load_generated
from flamefuse.codegen import tune
from flamefuse.machine import tuning_key
from flamefuse.timing import side_by_side

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs" / "performance.md"
SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
BEGIN, END = "<!-- kernels:begin -->", "<!-- kernels:end -->"
SETTLE = 0.3          # seconds: OpenBLAS threads spin about 0.1 s after a call before they sleep


def spd(n: int, rng) -> np.ndarray:
    x = rng.standard_normal((n, n))
    return np.asfortranarray(x @ x.T / n + np.eye(n))


def normal(n: int, rng) -> np.ndarray:
    """A random normal matrix: it needs pivoting (the pivoted kernels and LAPACK do the same work)."""
    return np.asfortranarray(rng.standard_normal((n, n)))


def nrhs(n: int) -> int:
    return min(n, 256)


def fresh(d: dict) -> dict:
    return {k: v.copy(order="F") for k, v in d.items()}


@dataclass(frozen=True)
class Case:
    spec: str                                     # generated/<spec>.py holds the fused kernel
    inputs: Callable[[int, np.random.Generator], dict]
    flops: Callable[[int], float]
    unfused: tuple[tuple[str, tuple[str, ...]], ...]   # (single-op spec, operand names passed)
    lapack: tuple[str, Callable]                  # (name, function of the inputs dict -> result)
    result: Callable[[dict], np.ndarray]          # the fused kernel's result, comparable to lapack's
    numpy: tuple[str, Callable] | None = None


def _potrf_potri(d):
    c, info = lapack.dpotrf(d["A"], lower=1, overwrite_a=1)
    return lapack.dpotri(c, lower=1, overwrite_c=1)[0]


def _potrf_trtrs(key):
    def run(d):
        c, info = lapack.dpotrf(d["A"], lower=1, overwrite_a=1)
        return lapack.dtrtrs(c, d[key], lower=1, overwrite_b=1)[0]
    return run


def _getrf_getrs(d):
    lu, piv, info = lapack.dgetrf(d["A"], overwrite_a=1)
    return lapack.dgetrs(lu, piv, d["B"], overwrite_b=1)[0]


def _getrf_getri(d):
    lu, piv, info = lapack.dgetrf(d["A"], overwrite_a=1)
    return lapack.dgetri(lu, piv, overwrite_lu=1)[0]


CASES = {
    "spd_inverse": Case("spd_inverse", lambda n, r: {"A": spd(n, r)}, lambda n: n ** 3,
                        (("cholesky", ("A",)), ("trinv", ("A",)), ("ltl", ("A",))),
                        ("potrf+potri", _potrf_potri), lambda d: d["A"],
                        ("numpy.linalg.inv", lambda d: np.linalg.inv(d["A"]))),
    "chol_solve": Case("chol_solve", lambda n, r: {"A": spd(n, r), "b": r.standard_normal(n)},
                       lambda n: n ** 3 / 3 + n ** 2,
                       (("cholesky", ("A",)), ("trsv", ("A", "b"))), ("potrf+trtrs", _potrf_trtrs("b")),
                       lambda d: d["b"]),
    "chol_trsm": Case("chol_trsm",
                      lambda n, r: {"A": spd(n, r), "B": np.asfortranarray(r.standard_normal((n, nrhs(n))))},
                      lambda n: n ** 3 / 3 + n ** 2 * nrhs(n),
                      (("cholesky", ("A",)), ("trsm", ("A", "B"))), ("potrf+trtrs", _potrf_trtrs("B")),
                      lambda d: d["B"]),
    "general_inverse": Case("general_inverse", lambda n, r: {"A": normal(n, r)}, lambda n: 2 * n ** 3,
                            (("lu", ("A",)), ("trinv_unit", ("A",)), ("triuinv", ("A",)), ("ul", ("A",))),
                            ("getrf+getri", _getrf_getri), lambda d: d["A"],
                            ("numpy.linalg.inv", lambda d: np.linalg.inv(d["A"]))),
    "lu_solve": Case("lu_solve",
                     lambda n, r: {"A": normal(n, r), "B": np.asfortranarray(r.standard_normal((n, nrhs(n))))},
                     lambda n: 2 * n ** 3 / 3 + 2 * n ** 2 * nrhs(n), (),
                     ("getrf+getrs", _getrf_getrs), lambda d: d["B"],
                     ("numpy.linalg.solve", lambda d: np.linalg.solve(d["A"], d["B"]))),
}


def module(name: str):
    path = GENERATED / f"{name}.py"
    return load_generated(path) if path.is_file() else None


def operand_order(spec_name: str) -> tuple[str, ...]:
    from flamefuse.spec import load
    return tuple(o.name for o in load(ROOT / "specs" / f"{spec_name}.yaml").operands)


def interleaved(contenders: dict[str, Callable], make: Callable[[], dict], reps: int,
                libraries: dict[str, str] | None = None) -> dict[str, float]:
    """Minimum time of each contender; a pause (SETTLE s) wherever the BLAS library changes.

    NumPy and SciPy load separate OpenBLAS builds (scipy_openblas64 / 32), each
    with its own thread pool whose idle threads spin for a while after a call;
    timing one library while the other's threads still spin measures that
    contention (10x at n = 128 on 2 cores), not the kernel.
    """
    def library(label):
        return (libraries or {}).get(label, "scipy")

    def pause(label, previous):
        return SETTLE if previous is not None and library(label) != library(previous) else 0
    return side_by_side({label: (fn, make) for label, fn in contenders.items()}, reps, seed=None, pause=pause)


def dgemm_rate(n: int = 2048, reps: int = 5) -> float:
    a = np.asfortranarray(np.random.default_rng(0).random((n, n)))
    blas.dgemm(1.0, a, a)
    t = interleaved({"dgemm": lambda d: blas.dgemm(1.0, d, d)}, lambda: a, reps)["dgemm"]
    return 2 * n ** 3 / t / 1e9


def kernel_step(spec: str, keys: tuple[str, ...], n: int, base: dict, fixed: int | None):
    """(callable on an inputs dict, block size, kernel name) for the DEFAULT kernel of generated/<spec>.py.

    ``keys``: the inputs-dict entries passed as the kernel's operands, in the spec's operand order.
    """
    mod = module(spec)
    if mod is None:
        return None
    if len(keys) != len(operand_order(spec)):
        raise ValueError(f"{spec} takes {operand_order(spec)}, the benchmark passes {keys}")
    if fixed is not None:
        nb = fixed
    else:
        time.sleep(SETTLE)                      # let another library's BLAS threads go idle first
        digest = hashlib.sha256(Path(mod.__file__).read_bytes()).hexdigest()[:12]
        nb = tune.block_size(mod.DEFAULT, f"{spec}.{mod.DEFAULT_NAME}@{digest}", n,
                             lambda: [fresh(base)[k] for k in keys])
    fn = mod.DEFAULT

    def run(d):
        info = fn(*[d[k] for k in keys], block_size=nb)
        if info != 0:
            raise RuntimeError(f"{spec}: info = {info}")
    return run, nb, f"{spec}.{mod.DEFAULT_NAME}"


def measure(case: Case, n: int, rng, reps: int, fixed: int | None) -> dict:
    base = case.inputs(n, rng)
    fused = kernel_step(case.spec, operand_order(case.spec), n, base, fixed)
    steps = [kernel_step(s, args, n, base, fixed) for s, args in case.unfused]
    row = {"case": case.spec, "n": n}
    contenders = {case.lapack[0]: case.lapack[1]}
    if fused:
        row["fused_kernel"], row["block_size"] = fused[2], fused[1]
        contenders["fused"] = fused[0]
        d = fresh(base)
        fused[0](d)
        want = case.lapack[1](fresh(base))
        got = case.result(d)
        if case.spec == "spd_inverse":
            got, want = np.tril(got), np.tril(want)
        row["rel_error_vs_lapack"] = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        if not row["rel_error_vs_lapack"] < 1e-8:
            raise RuntimeError(f"{case.spec} n={n}: fused result differs from LAPACK "
                               f"(relative error {row['rel_error_vs_lapack']:.2e})")
    if steps and all(steps):
        row["unfused_block_sizes"] = {s[2]: s[1] for s in steps}
        contenders["unfused"] = lambda d: [s[0](d) for s in steps]
    if case.numpy:
        contenders[case.numpy[0]] = case.numpy[1]
    for fn in contenders.values():
        fn(fresh(base))                         # warm-up (JIT compile or Numba cache load, BLAS buffers)
    time.sleep(SETTLE)
    libraries = {case.numpy[0]: "numpy"} if case.numpy else {}
    row.update(interleaved(contenders, lambda: fresh(base), reps, libraries))
    row["gflops_fused"] = case.flops(n) / row["fused"] / 1e9 if "fused" in row else None
    return row


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench kernels")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--block-size", type=int, default=None, help="use this block size instead of the autotuned ones")
    ap.add_argument("--docs", default=None,
                    help=f"markdown file whose kernels table is replaced (default: {DOCS.relative_to(ROOT)} "
                         "after a full run over every case and size; partial runs leave it alone)")
    ap.add_argument("--variants", metavar="SPEC", default=None,
                    help="time every variant of SPEC instead (benchmarks/variants.py; --sizes, --reps, --write)")
    ap.add_argument("--write", action="store_true", help="with --variants: record the fastest as DEFAULT")
    args = ap.parse_args(argv)
    if args.variants:
        from flamefuse.files import import_file
        variants = import_file(Path(__file__).with_name("variants.py"), "flamefuse_bench_variants")
        rest = [args.variants, "--reps", str(args.reps)] + (["--write"] if args.write else [])
        return variants.main(rest + (["--sizes", args.sizes] if "--sizes" in " ".join(argv) else []))
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [CASES[c] for c in args.cases.split(",")]
    console = Console() if Console().is_terminal else Console(width=160)
    rng = np.random.default_rng(0)
    load = os.getloadavg()
    peak = dgemm_rate()
    rows = []
    with Progress(console=console) as progress:
        task = progress.add_task("timing (autotune on first use)", total=len(sizes) * len(cases))
        for case in cases:
            for n in sizes:
                rows.append(measure(case, n, rng, args.reps, args.block_size))
                progress.advance(task)
    peak = max(peak, dgemm_rate())
    meta = {"dgemm_gflops": peak, "machine": tuning_key(), "reps": args.reps,
            "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
            "loadavg_before": load, "loadavg_after": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    tables = [table(case, rows, peak) for case in cases]
    for t in tables:
        console.print(t)
    console.print(f"dgemm rate: {peak:.1f} GFLOP/s; load average before/after: "
                  f"{load[0]:.1f} / {meta['loadavg_after'][0]:.1f}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "kernels.json").write_text(json.dumps({**meta, "rows": rows}, indent=1))
    plot(rows, cases, RESULTS / "kernels.png")
    full = sorted(sizes) == sorted(SIZES) and len(cases) == len(CASES)
    if args.docs or full:
        write_docs(Path(args.docs or DOCS), markdown(cases, rows, meta))
    console.print(f"results: {RESULTS.relative_to(ROOT)}/kernels.json, kernels.png")
    return 0


def baselines(case: Case) -> list[str]:
    return ["unfused", case.lapack[0]] + ([case.numpy[0]] if case.numpy else [])


def cells(case: Case, r: dict, peak: float) -> list[str]:
    f, g = r.get("fused"), r.get("gflops_fused")
    out = [str(r["n"]), str(r.get("block_size", "-")), _ms(f)] + [_ms(r.get(b)) for b in baselines(case)]
    out += [f"{f / r[b]:.2f}" if f and r.get(b) else "-" for b in baselines(case)]
    return out + [f"{g:.1f}" if g else "-", f"{100 * g / peak:.0f}%" if g else "-"]


def header(case: Case) -> list[str]:
    return ["n", "nb", "fused"] + baselines(case) + [f"vs {b}" for b in baselines(case)] + ["GFLOP/s", "of dgemm"]


def table(case: Case, rows: list[dict], peak: float) -> Table:
    t = Table(title=f"{case.spec}: times in ms (min of reps), ratio = fused / baseline")
    for col in header(case):
        t.add_column(col, justify="right")
    for r in (r for r in rows if r["case"] == case.spec):
        t.add_row(*cells(case, r, peak))
    return t


def markdown(cases: list[Case], rows: list[dict], meta: dict) -> str:
    out = [f"Measured {meta['date']} on {meta['machine']} (OPENBLAS_NUM_THREADS={meta['openblas_num_threads']}), "
           f"min of {meta['reps']} interleaved repetitions; dgemm rate {meta['dgemm_gflops']:.1f} GFLOP/s; "
           f"load average {meta['loadavg_before'][0]:.1f} before, {meta['loadavg_after'][0]:.1f} after.", ""]
    for case in cases:
        out += [f"**{case.spec}** (times in ms; ratio = fused / baseline, < 1 is faster)", "",
                "| " + " | ".join(header(case)) + " |", "|" + "---:|" * len(header(case))]
        out += ["| " + " | ".join(cells(case, r, meta["dgemm_gflops"])) + " |"
                for r in rows if r["case"] == case.spec]
        out.append("")
    return "\n".join(out)


def write_docs(path: Path, text: str) -> None:
    if not path.is_file():
        return
    doc = path.read_text()
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        path.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}")


def _ms(t: float | None) -> str:
    return "-" if t is None else f"{1e3 * t:.3g}"


def plot(rows: list[dict], cases: list[Case], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4), squeeze=False)
    for ax, case in zip(axes[0], cases):
        mine = [r for r in rows if r["case"] == case.spec]
        for label in baselines(case):
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
