"""What ``flamefuse fuse`` costs a process beside the script's own work: its start-up and exit.

``flamefuse bench startup [--code LABEL=DIR ...] [--repeat R]``

Two tiny scripts, each run as its own process side by side (``--repeat`` rounds, each in a fresh
order; the minimum of each; wall time, and the process's CPU time, user and system, which a
loaded machine inflates much less than the wall time): ``plain`` (a scalar loop over a
small array: adaptive fusion runs it as plain NumPy from its second run on) and ``fused`` (a few
element-wise passes over 200 000 elements: it stays fused). Each runs under ``python`` (the
baseline) and under ``python -m flamefuse.cli fuse`` of each checkout (``--code``, default this
one), with a warm kernel cache (three runs first: learn, build the native libraries, settle) and
compiled bytecode kept as an installed package has it (:func:`corpus.bytecode_env`). The script's
work is a few milliseconds, so the difference is flamefuse's fixed cost per process: importing
its runtime, reading its decisions, kernel list, plans and native libraries, and its exit.
Prints one table (ms) and the load average; writes nothing into the repository.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (bytecode_env)
from flamefuse.timing import children_cpu, seconds, timed  # noqa: E402


SCRIPTS = {
    "plain": ("import numpy as np\n"
              "a = np.zeros(64)\n"
              "for i in range(1, 64):\n"
              "    a[i] = a[i - 1] * 0.5 + np.sqrt(float(i))\n"
              "print(float(a.sum()))\n"),
    "fused": ("import numpy as np\n"
              "x = np.linspace(0.0, 1.0, 200_000)\n"
              "y = np.sin(x) * 2.0 + x * x\n"
              "for _ in range(4):\n"
              "    y = (y - 1.0) / 3.0 + np.cos(x)\n"
              "print(float(y.sum()))\n"),
}


def _call(cmd: list, env: dict, cwd: str):
    """A function running ``cmd`` once: ``(wall seconds, CPU seconds)`` of its process."""
    def once():
        return seconds(subprocess.run, cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    def run():
        cpu, wall = timed(once, clock=children_cpu)
        return wall, cpu
    return run


def measure(codes: dict, repeat: int, tmp: Path, bytecode: bool = True) -> dict:
    """``{script: {label: (wall, cpu)}}``: the best whole-process times of each way to run it
    (``bytecode`` False: with this environment's bytecode setting, as ``flamefuse bench corpus``
    ran before it kept bytecode)."""
    base = dict(os.environ, PYTHONWARNINGS="ignore")
    if bytecode:
        base = corpus.bytecode_env(base, tmp / "pycache")
    out = {}
    for name, text in SCRIPTS.items():
        script = tmp / f"{name}.py"
        script.write_text(text)
        runs = {"python": _call([sys.executable, str(script)], base, str(tmp))}
        for label, folder in codes.items():
            env = dict(base, PYTHONPATH=folder, FLAMEFUSE_CACHE_DIR=str(tmp / f"cache-{label}"))
            runs[label] = _call([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)], env, folder)
        for label, run in runs.items():
            for _ in range(3 if label != "python" else 1):
                run()                               # warm: learned, built, bytecode kept
        best = {label: (float("inf"), float("inf")) for label in runs}
        order, shuffle = list(runs), random.Random(0).shuffle
        for _ in range(repeat):
            shuffle(order)
            for label in order:
                wall, cpu = runs[label]()
                best[label] = (min(best[label][0], wall), min(best[label][1], cpu))
        out[name] = best
    return out


def report(times: dict, codes: list) -> str:
    """One row per script and measure (wall, CPU): python's time, each checkout's, and each
    checkout's excess over python, in ms."""
    head = ["script", "measure", "python ms"] + [f"{c} ms" for c in codes] + \
           [f"{c} over python ms" for c in codes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, t in times.items():
        for i, measure_ in enumerate(("wall", "cpu")):
            py = t["python"][i]
            lines.append(f"| {name} | {measure_} | {1e3 * py:.0f} | "
                         + " | ".join(f"{1e3 * t[c][i]:.0f}" for c in codes) + " | "
                         + " | ".join(f"{1e3 * (t[c][i] - py):+.0f}" for c in codes) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="flamefuse bench startup")
    p.add_argument("--code", action="append", default=[], help="LABEL=DIR, a flamefuse checkout")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--environment-bytecode", action="store_true",
                   help="keep this environment's bytecode setting (PYTHONDONTWRITEBYTECODE=1: "
                        "flamefuse compiled from source in every process)")
    opts = p.parse_args(argv)
    codes = dict(c.split("=", 1) for c in opts.code) or {"this": str(HERE.parent)}
    codes = {k: str(Path(v).resolve()) for k, v in codes.items()}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        times = measure(codes, opts.repeat, Path(tmp), not opts.environment_bytecode)
    print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; best of "
          f"{opts.repeat} rounds, warm caches, bytecode "
          f"{'as the environment has it' if opts.environment_bytecode else 'kept'}\n")
    print(report(times, list(codes)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
