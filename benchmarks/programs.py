"""Real NumPy programs, unchanged, under ``flamefuse fuse``: checked against NumPy and timed.

``flamefuse bench programs [--repeat R] [--only a,b] [--scale S]``

Each program in ``benchmarks/programs/`` is an ordinary NumPy script
(``import numpy as np``) taking ``ARGS... OUT.npy``; it prints ``TIME <s>`` for
its computation (ending in a sync: a ``float()`` of a result) and saves its
result. The runner runs every program as its own process with plain NumPy
(the baseline) and as ``python -m flamefuse.cli fuse SCRIPT ARGS OUT.npy``,
side by side: first one ``fuse`` run that fills the kernel cache (``cold``),
then ``--repeat`` rounds of NumPy and ``fuse`` in turn, best time of each.
Results must match NumPy's (``numpy.allclose`` with the program's tolerance).
Reported per program: whole-process wall time of both and their ratio, the
timed computation of both and their ratio, the warm run's kernels compiled,
its fallbacks, and the geometric means. Results go to
``benchmarks/results/programs.json`` and ``docs/programs-performance.md``, written before
the table is printed (a reader that stops early, ``| head``, loses no result; the printing
then stops quietly and the measuring goes on).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy

from flamefuse.timing import timed

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks" / "programs"
# name -> (arguments before OUT.npy, relative tolerance against NumPy)
PROGRAMS = {
    "heat": (["2000", "40"], 1e-12),
    "life": (["3000", "40"], 0),
    "shallow_water": (["1000", "20"], 1e-9),
    "lattice_boltzmann": (["1600", "30"], 1e-9),
    "nbody": (["2000", "10"], 1e-9),
    "monte_carlo_pi": (["10000000", "5"], 0),
    "leibniz_pi": (["10000000", "5"], 1e-12),
    "gauss": (["1000", "1"], 1e-9),
    "lu": (["1000", "1"], 1e-9),
    "convolution": (["3000", "3"], 1e-12),
    "xray": (["1500", "40"], 1e-12),
    "quasicrystal": (["1500", "6"], 1e-12),
    "markov": (["2000", "300"], 1e-9),
}
NOTES = """\
* Baseline: the same script run by plain NumPy in its own process. `process` = whole-process wall
  time (interpreter start, imports, kernel-cache loading, the run); `part` = the script's own timed
  computation (`TIME`); `x` = NumPy time / flamefuse time (higher is better); `cold` = the first
  `fuse` run's process time (kernels compiled or loaded from a previous cache).
* `kernels compiled` and `fallbacks` are from the warm run's `flamefuse fuse` summary; every result
  matches NumPy's (`numpy.allclose`, the program's tolerance; 0 = exact).
* The machine has 2 cores shared with other developers' jobs; the load average is stated above.
"""


def _run(cmd: list[str], env: dict) -> tuple[float, str, str]:
    wall, proc = timed(subprocess.run, cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return wall, proc.stdout, proc.stderr


def _part(stdout: str) -> float:
    return float(re.search(r"^TIME ([0-9.eE+-]+)", stdout, re.M).group(1))


def _summary_count(stderr: str, label: str) -> int:
    m = re.search(label + r" (\d+)", stderr)
    return int(m.group(1)) if m else -1


def measure(name: str, args: list[str], rtol: float, repeat: int, tmp: Path) -> dict:
    script = str(HERE / f"{name}.py")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    out_np, out_ff = str(tmp / f"{name}.np.npy"), str(tmp / f"{name}.ff.npy")
    fuse = [sys.executable, "-m", "flamefuse.cli", "fuse", script, *args]
    cold, _, _ = _run(fuse + [out_ff], env)
    best = {"numpy": (math.inf, math.inf), "fuse": (math.inf, math.inf)}
    err = ""
    for _ in range(repeat):
        for label, cmd in (("numpy", [sys.executable, script, *args, out_np]), ("fuse", fuse + [out_ff])):
            wall, stdout, stderr = _run(cmd, env)
            best[label] = (min(best[label][0], wall), min(best[label][1], _part(stdout)))
            err = stderr if label == "fuse" else err
    a, b = numpy.load(out_np), numpy.load(out_ff)
    match = a.shape == b.shape and bool(numpy.allclose(a, b, rtol=rtol, atol=rtol * float(numpy.abs(a).max() or 1))
                                        if rtol else numpy.array_equal(a, b))
    return {"program": name, "args": " ".join(args), "numpy_process_s": best["numpy"][0],
            "fuse_process_s": best["fuse"][0], "numpy_part_s": best["numpy"][1],
            "fuse_part_s": best["fuse"][1], "cold_s": cold, "match": match,
            "kernels_compiled": _summary_count(err, "kernels compiled"),
            "fallbacks": _summary_count(err, "fallbacks")}


def _gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(rows: list[dict]) -> str:
    lines = ["| program | args | numpy process s | fuse process s | process x | numpy part s | "
             "fuse part s | part x | cold s | kernels compiled | fallbacks | matches NumPy |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['args']} | {r['numpy_process_s']:.3f} | {r['fuse_process_s']:.3f} | "
                     f"{r['numpy_process_s'] / r['fuse_process_s']:.2f} | {r['numpy_part_s']:.3f} | "
                     f"{r['fuse_part_s']:.3f} | {r['numpy_part_s'] / r['fuse_part_s']:.2f} | {r['cold_s']:.2f} | "
                     f"{r['kernels_compiled']} | {r['fallbacks']} | {'yes' if r['match'] else 'NO'} |")
    proc = _gmean([r["numpy_process_s"] / r["fuse_process_s"] for r in rows])
    part = _gmean([r["numpy_part_s"] / r["fuse_part_s"] for r in rows])
    lines.append(f"| geometric mean | | | | {proc:.2f} | | | {part:.2f} | | | | |")
    return "\n".join(lines)


def targets(rows: list[dict]) -> list[str]:
    long = [r for r in rows if r["numpy_process_s"] >= 1.0]
    slow = [r["program"] for r in long if r["numpy_process_s"] < r["fuse_process_s"]]
    part = _gmean([r["numpy_part_s"] / r["fuse_part_s"] for r in rows])
    return [f"* {'met' if not slow else 'missed'}: whole process >= 1x NumPy on every program whose NumPy "
            f"run takes >= 1 s ({len(long)} programs" + (f"; slower: {', '.join(slow)})" if slow else ")"),
            f"* {'met' if part >= 2 else 'missed'}: fused part geometric mean >= 2x ({part:.2f}x)",
            f"* {'met' if all(r['match'] for r in rows) else 'MISSED'}: every result matches NumPy's"]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="flamefuse bench programs")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--only", default="", help="comma-separated program names")
    p.add_argument("--no-write", action="store_true", help="print only; keep docs and results")
    opts = p.parse_args(argv)
    names = [n for n in PROGRAMS if not opts.only or n in opts.only.split(",")]
    load0 = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            args, rtol = PROGRAMS[name]
            rows.append(measure(name, args, rtol, opts.repeat, Path(tmp)))
            r = rows[-1]
            _say(f"{name}: numpy {r['numpy_process_s']:.3f} s / fuse {r['fuse_process_s']:.3f} s process, "
                 f"part {r['numpy_part_s']:.3f} / {r['fuse_part_s']:.3f} s, match {r['match']}")
    load1 = os.getloadavg()[0]
    head = (f"Measured by `flamefuse bench programs` (`benchmarks/programs.py`), best of {opts.repeat} "
            f"side-by-side rounds; 1-minute load average {load0:.1f} at the start and {load1:.1f} at the end "
            f"(2 cores); baseline: the same script under plain NumPy.")
    text = "\n".join([table(rows), "", "## Targets", "", *targets(rows)])
    if not opts.no_write:
        (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
        (ROOT / "benchmarks" / "results" / "programs.json").write_text(json.dumps(rows, indent=1))
        (ROOT / "docs" / "programs-performance.md").write_text(
            "# NumPy programs under `flamefuse fuse`\n\n" + head + "\n\n" + text + "\n\n## Notes\n\n" + NOTES)
    _say(text)
    return 0 if all(r["match"] for r in rows) else 1


def _say(text: str) -> None:
    """Print ``text``; once the reader has gone (a closed pipe) print nothing more."""
    if sys.stdout is None:
        return
    try:
        print(text, flush=True)
    except BrokenPipeError:
        try:                        # no second error when Python flushes stdout at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (AttributeError, OSError, ValueError):
            pass
        sys.stdout = None
