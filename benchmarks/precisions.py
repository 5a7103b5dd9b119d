"""The fused SPD inverse in every LAPACK precision vs LAPACK potrf + potri of that precision.

    flamefuse bench precisions [--sizes 256,512,1024,2048,4096] [--reps 5]

For float32, float64, complex64 and complex128 (Hermitian positive definite
inputs), side by side in one run: the generated ``spd_inverse.DEFAULT``
(its own block size) and SciPy's ``?potrf`` + ``?potri`` of the same
precision, each repetition on fresh copies in a fresh random order, minimum
of ``--reps``. Target: fused <= 1.0x LAPACK from n = 1024. The table goes to
docs/precisions.md. Set ``OPENBLAS_NUM_THREADS`` before starting to pick the
BLAS thread count (recorded in the table).
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.linalg import lapack

from flamefuse.timing import side_by_side
from flamefuse.codegen import load_generated

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "precisions.md"
DTYPES = ("float32", "float64", "complex64", "complex128")


def hpd(n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, n))
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal((n, n))
    return np.asfortranarray((x @ x.conj().T / n + np.eye(n)).astype(dtype))


def measure(mod, n: int, dtype: str, reps: int) -> dict:
    base = hpd(n, dtype)
    potrf, potri = lapack.get_lapack_funcs(("potrf", "potri"), (base,))

    def lapack_run(a):
        c, _ = potrf(a, lower=1, overwrite_a=1)
        potri(c, lower=1, overwrite_c=1)

    fresh = lambda: base.copy(order="F")
    contenders = {"fused": (lambda a: mod.DEFAULT(a), fresh), "LAPACK": (lapack_run, fresh)}
    for call, make in contenders.values():
        call(make())
    best = side_by_side(contenders, reps, pause=0.2)
    return {"dtype": dtype, "n": n, **best}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench precisions")
    ap.add_argument("--sizes", default="256,512,1024,2048,4096")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    console = Console() if Console().is_terminal else Console(width=120)
    mod = load_generated(ROOT / "generated" / "spd_inverse.py")
    rows = [measure(mod, int(n), dt, args.reps) for dt in DTYPES for n in args.sizes.split(",")]
    table = Table(title="spd_inverse: fused vs ?potrf + ?potri (ms, min of reps)", show_edge=False)
    for c in ("dtype", "n", "fused", "LAPACK", "fused / LAPACK"):
        table.add_column(c, justify="right")
    md = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, min of {args.reps} repetitions in random order "
          f"(load average {os.getloadavg()[0]:.1f}). Target: fused / LAPACK <= 1.0 from n = 1024.", "",
          "| dtype | n | fused [ms] | ?potrf + ?potri [ms] | fused / LAPACK |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        cells = [r["dtype"], str(r["n"]), f"{1e3 * r['fused']:.3g}", f"{1e3 * r['LAPACK']:.3g}",
                 f"{r['fused'] / r['LAPACK']:.2f}"]
        table.add_row(*cells)
        md.append("| " + " | ".join(cells) + " |")
    console.print(table)
    DOCS.write_text("# The SPD inverse in every precision\n\nWritten by `flamefuse bench precisions` "
                    "(s, d, c, z: float32, float64, complex64, complex128; Hermitian inputs for complex).\n\n"
                    + "\n".join(md) + "\n")
    return 0
