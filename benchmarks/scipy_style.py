"""What the SciPy-style call costs over the in-place kernel, side by side.

    flamefuse bench scipy_style [--sizes 256,4096] [--reps 5]

For the SPD inverse and the general inverse, each repetition runs, in a
fresh random order and on fresh inputs made outside the timed region:

* ``in place``: ``DEFAULT(A)`` on a Fortran-ordered array (no copy, no checks);
* ``scipy-style``: ``spd_inverse(A)`` on a C-ordered array (check_finite, one
  copy, and for the SPD inverse the mirrored upper triangle);
* ``overwrite``: the same with ``overwrite_a=True`` (the transpose identity
  makes the C-ordered array usable without a copy);
* ``numpy.linalg.inv``.

The minimum of ``--reps`` is kept; the table goes to docs/scipy-style.md.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from flamefuse.timing import side_by_side
from flamefuse.codegen import load_generated

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "scipy-style.md"


def inputs(spec: str, n: int) -> np.ndarray:
    x = np.random.default_rng(n).standard_normal((n, n))
    return x @ x.T / n + np.eye(n) if spec == "spd_inverse" else x


def measure(spec: str, n: int, reps: int) -> dict:
    mod = load_generated(ROOT / "generated" / f"{spec}.py")
    fn = getattr(mod, spec)
    base = inputs(spec, n)
    contenders = {
        "in place": (lambda a: mod.DEFAULT(a), lambda: np.asfortranarray(base)),
        "scipy-style": (lambda a: fn(a), lambda: np.array(base, order="C")),
        "overwrite": (lambda a: fn(a, overwrite_a=True), lambda: np.array(base, order="C")),
        "numpy.linalg.inv": (np.linalg.inv, lambda: np.array(base, order="C")),
    }
    for call, make in contenders.values():
        call(make())
    best = side_by_side(contenders, reps, pause=0.2)
    return {"spec": spec, "n": n, **best}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="flamefuse bench scipy_style")
    ap.add_argument("--sizes", default="256,4096")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    console = Console() if Console().is_terminal else Console(width=140)
    rows = [measure(spec, int(n), args.reps) for spec in ("spd_inverse", "general_inverse")
            for n in args.sizes.split(",")]
    cols = ["in place", "scipy-style", "overwrite", "numpy.linalg.inv"]
    table = Table(title="SciPy-style call vs in-place kernel (ms, min of reps)", show_edge=False)
    for c in ["spec", "n"] + cols + ["scipy-style / in place", "overwrite / in place"]:
        table.add_column(c, justify="right")
    md = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, min of {args.reps} repetitions in random order "
          f"(load average {os.getloadavg()[0]:.1f}).", "",
          "| spec | n | " + " | ".join(cols) + " | scipy-style / in place | overwrite / in place |",
          "|---|---:|" + "---:|" * (len(cols) + 2)]
    for r in rows:
        cells = [f"{1e3 * r[c]:.3g}" for c in cols]
        ratios = [f"{r['scipy-style'] / r['in place']:.2f}", f"{r['overwrite'] / r['in place']:.2f}"]
        table.add_row(r["spec"], str(r["n"]), *cells, *ratios)
        md.append(f"| {r['spec']} | {r['n']} | " + " | ".join(cells + ratios) + " |")
    console.print(table)
    head = ("# The SciPy-style functions: cost of the copy\n\n"
            "Each generated module exports `<spec>(A, *, overwrite_a=False, check_finite=True, ...)`, "
            "which takes any layout and returns what NumPy returns. Written by `flamefuse bench scipy_style`.\n\n")
    DOCS.write_text(head + "\n".join(md) + "\n")
    return 0
