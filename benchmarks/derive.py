"""Derive (search) time: every shipped spec, and synthetic chains of k operations.

In-process: min over repetitions of load + enumerate (CP-SAT).  Whole
command: ``flamefuse derive --json`` as a process (interpreter start-up and
imports included), cold (a fresh user cache: search and derivation) and
repeated (the median of 3 runs served from the record the cold run kept;
docs/derive-startup.md), each as wall time and as the process's CPU time (user +
system, :func:`flamefuse.timing.children_cpu`: what a loaded machine inflates least).  Chains alternate ``trinv`` (L_j into a fresh L_{j+1})
and ``trmv`` (y_j += L_{j+1} x), so each operation consumes the previous one.
Targets: every spec < 0.2 s in-process, k = 10 < 2 s; whole command repeated
<= 0.15 s (the reference tool, pme-fusion under SWI-Prolog, took 0.15 s), cold <= 0.3 s.

``--reference DIR`` (a pme-fusion checkout: ``DIR/gen_invariants.pl``) also runs the reference
side by side on the problems in its own term syntax (``tests/core/data/*.txt``): ``swipl
DIR/gen_invariants.pl PROBLEM`` against ``flamefuse derive PROBLEM --json`` cold and repeated,
alternating, median of 3, with the ratios. Without ``swipl`` on the PATH or without the
checkout the benchmark says so and measures flamefuse alone.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load, load_spec_text
from flamefuse.timing import best_of, children_cpu, timed

ROOT = Path(__file__).resolve().parent.parent


def chain_spec(k: int) -> str:
    """A spec of k operations: trinv, trmv, trinv, trmv, ... each on fresh output regions."""
    mats = (k + 2) // 2 + 1
    lines = ["name: chain%d" % k, "operands:"]
    lines += [f"  L{j}: {{kind: matrix, structure: lower}}" for j in range(mats)]
    lines += ["  x: {kind: vector}"] + [f"  y{j}: {{kind: vector}}" for j in range(mats)]
    lines.append("operations:")
    for i in range(k):
        j = i // 2
        if i % 2 == 0:
            lines += ["  - op: trinv", f"    L: L{j}", f"    R: L{j + 1}"]
        else:
            lines += ["  - op: trmv", f"    L: L{j + 1}", "    x: x", f"    y: y{j}"]
    return "\n".join(lines) + "\n"


def command_time(path: Path) -> tuple[float, float, float, float]:
    """(cold, repeated, cold CPU, repeated CPU) seconds of ``flamefuse derive PATH --json`` as a
    whole process: wall time, and the process's user + system time."""
    def once(env) -> tuple[float, float]:
        cpu0 = children_cpu()
        wall, _ = timed(subprocess.run, [sys.executable, "-m", "flamefuse.cli", "derive", str(path), "--json"],
                        check=True, capture_output=True, env=env)
        return wall, children_cpu() - cpu0

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FLAMEFUSE_CACHE_DIR=cache)
        cold = once(env)
        again = [once(env) for _ in range(3)]
        return (cold[0], statistics.median(w for w, _ in again), cold[1], statistics.median(c for _, c in again))


def reference_rows(console, ref_dir: str | None) -> list | None:
    """Side by side with the reference tool on the term-syntax problems, or None (and why)."""
    import shutil
    swipl = shutil.which("swipl")
    script = Path(ref_dir or "", "gen_invariants.pl")
    if ref_dir is None or swipl is None or not script.is_file():
        why = ("no --reference DIR given" if ref_dir is None else "swipl not found on the PATH" if swipl is None
               else f"{script} does not exist")
        console.print(f"reference tool not run: {why}; the targets use its measured 0.15 s")
        return None
    rows = []
    for problem in sorted((ROOT / "tests" / "core" / "data").glob("*.txt")):
        ref = []
        for _ in range(3):
            cpu0 = children_cpu()
            wall, _ = timed(subprocess.run, [swipl, str(script), str(problem)], check=True, capture_output=True)
            ref.append((wall, children_cpu() - cpu0))
        ours = command_time(problem)
        rows.append((problem.stem, statistics.median(w for w, _ in ref), ours[0], ours[1]))
    table = Table(title="flamefuse derive --json against the reference (swipl gen_invariants.pl), wall")
    for col in ("problem", "reference [s]", "cold [s]", "cold / ref", "repeated [s]", "repeated / ref"):
        table.add_column(col, justify="left" if col == "problem" else "right")
    for name, ref, cold, again in rows:
        table.add_row(name, f"{ref:.3f}", f"{cold:.3f}", f"{cold / ref:.2f}x", f"{again:.3f}",
                      f"{again / ref:.2f}x")
    console.print(table)
    return rows


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="flamefuse bench derive")
    parser.add_argument("--reference", metavar="DIR", help="a pme-fusion checkout to run side by side")
    args = parser.parse_args(argv)
    console = Console()
    against = reference_rows(console, args.reference)
    reps = 5
    rows = []
    specs = sorted((ROOT / "specs").glob("*.yaml"))
    for path in track(specs, description="specs", console=console):
        count = len(enumerate_cpsat(load(path)))
        rows.append((path.stem, count, best_of(lambda: enumerate_cpsat(load(path)), reps), command_time(path)))
    with tempfile.TemporaryDirectory() as tmp:
        for k in track(range(1, 11), description="chains", console=console):
            text = chain_spec(k)
            path = Path(tmp) / f"chain{k}.yaml"
            path.write_text(text)
            count = len(enumerate_cpsat(load_spec_text(text)))
            rows.append((f"chain k={k}", count, best_of(lambda: enumerate_cpsat(load_spec_text(text)), reps),
                         command_time(path)))
    table = Table(title="derive time (search only; min of %d in-process runs)" % reps)
    for col in ("problem", "invariants", "in-process [s]", "command cold [s]", "command repeated [s]",
                "cold CPU [s]", "repeated CPU [s]", "target"):
        table.add_column(col, justify="left" if col == "problem" else "right")
    for name, count, t_in, (cold, warm, cold_cpu, warm_cpu) in rows:
        limit = 2.0 if name == "chain k=10" else 0.2 if not name.startswith("chain") else None
        verdict = "" if limit is None else ("ok" if t_in < limit else "MISSED") + f" (< {limit} s)"
        table.add_row(name, str(count), f"{t_in:.4f}", f"{cold:.2f}", f"{warm:.3f}", f"{cold_cpu:.2f}",
                      f"{warm_cpu:.3f}", verdict)
    console.print(table)
    out = ROOT / "benchmarks" / "results" / "derive.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps([dict(problem=n, invariants=c, in_process_s=a, command_cold_s=b[0],
                                    command_repeated_s=b[1], command_cold_cpu_s=b[2],
                                    command_repeated_cpu_s=b[3]) for n, c, a, b in rows]
                              + [dict(problem=n, reference_s=r, command_cold_s=c, command_repeated_s=w)
                                 for n, r, c, w in against or ()], indent=1))
    console.print(f"results written to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
