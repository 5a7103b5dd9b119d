"""What ``flamefuse fuse`` costs a process beside the script's own work: its start-up and exit.

``flamefuse bench startup [--code LABEL=DIR ...] [--repeat R] [--own]``

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

``--own``: flamefuse's own CPU time inside the process instead (:func:`measure_own`), the precise
measure on a loaded machine, where whole processes' times spread by more than the few ms
compared: NumPy is imported first (every script here imports it anyway), then the CPU time from
importing ``flamefuse.cli`` to the script's first line (start-up) and from its last line to the
end of ``main()`` (exit), median and lower quartile of ``--repeat`` rounds.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
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

# what each script's runs are given besides: adaptive fusion's probe counts flamefuse's start-up
# since 1d3ce89, and on a script this short it measured plain NumPy faster, so ``fused`` went
# plain and the table measured a plain run twice; the probe's test hook settles it fused (as
# tests/runtime/test_startup.py does), so that ``fused`` is a warm fused run (its decisions read)
SETTLE = {"plain": {}, "fused": {"FLAMEFUSE_PROBE_SECONDS": "0.01,0.03"}}


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
            env = dict(base, PYTHONPATH=folder, FLAMEFUSE_CACHE_DIR=str(tmp / f"cache-{label}"), **SETTLE[name])
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


# ``python -c OWN SCRIPT``: ``flamefuse fuse SCRIPT`` with flamefuse's own CPU time (ms) written last
# to stderr as ``OWN <start-up> <exit>``; the script is one of :func:`timed_text`'s
OWN = """
import builtins, sys, time
import numpy
t0 = time.process_time()
sys.argv = ["flamefuse", "fuse"] + sys.argv[1:]
from flamefuse.cli import main
status = main()
t3 = time.process_time()
sys.stderr.write("\\nOWN %r %r\\n" % (1e3 * (builtins._FF_T1 - t0), 1e3 * (t3 - builtins._FF_T2)))
sys.exit(status)
"""


def timed_text(text: str) -> str:
    """``text`` with its first and last CPU times kept in ``builtins`` (for :data:`OWN`)."""
    return ("import builtins as _b, time as _t\n_b._FF_T1 = _t.process_time()\n" + text
            + "_b._FF_T2 = _t.process_time()\n")


def own_times(stderr: str) -> tuple[float, float]:
    """(start-up, exit) ms from a run of :data:`OWN`."""
    line = [ln for ln in stderr.splitlines() if ln.startswith("OWN ")][-1]
    start, end = (float(x) for x in line.split()[1:3])
    return start, end


def measure_own(codes: dict, repeat: int, tmp: Path) -> dict:
    """``{script: {label: [(start-up ms, exit ms), ...]}}``: flamefuse's own CPU time in each
    round (see the module doc), the checkouts in a fresh order each round, warm caches."""
    base = corpus.bytecode_env(dict(os.environ, PYTHONWARNINGS="ignore"), tmp / "pycache")
    out = {}
    for name, text in SCRIPTS.items():
        script = tmp / f"own_{name}.py"
        script.write_text(timed_text(text))
        envs = {label: dict(base, PYTHONPATH=folder, FLAMEFUSE_CACHE_DIR=str(tmp / f"own-cache-{label}"),
                            **SETTLE[name])
                for label, folder in codes.items()}

        def once(label):
            r = subprocess.run([sys.executable, "-c", OWN, str(script)], env=envs[label], cwd=codes[label],
                               capture_output=True, text=True, check=True)
            return own_times(r.stderr) + ("ran as plain NumPy" in r.stderr,)
        for label in codes:
            for _ in range(6):
                once(label)                         # warm: learned, built, probed, settled
            corpus.wait_for_compiles(envs[label], codes[label])
            once(label)
        samples = {label: [] for label in codes}
        order, shuffle = list(codes), random.Random(0).shuffle
        for _ in range(repeat):
            shuffle(order)
            for label in order:
                samples[label].append(once(label))
        out[name] = samples
    return out


def report_own(samples: dict, codes: list) -> str:
    """One row per script and checkout: start-up and exit CPU ms, median (lower quartile), and
    how many of the timed runs ran as plain NumPy (adaptive fusion's decision)."""
    lines = ["| script | checkout | start-up CPU ms, median (q25) | exit CPU ms, median (q25) | runs as plain NumPy |",
             "|---|---|---|---|---|"]
    for name, by in samples.items():
        for label in codes:
            cols = []
            for i in (0, 1):
                xs = sorted(x[i] for x in by[label])
                cols.append(f"{statistics.median(xs):.2f} ({xs[len(xs) // 4]:.2f})")
            plain = sum(1 for x in by[label] if len(x) > 2 and x[2])
            lines.append(f"| {name} | {label} | {cols[0]} | {cols[1]} | {plain} of {len(by[label])} |")
    return "\n".join(lines)


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
    p.add_argument("--own", action="store_true",
                   help="flamefuse's own CPU time inside the process (start-up and exit), not whole processes")
    p.add_argument("--environment-bytecode", action="store_true",
                   help="keep this environment's bytecode setting (PYTHONDONTWRITEBYTECODE=1: "
                        "flamefuse compiled from source in every process)")
    opts = p.parse_args(argv)
    codes = dict(c.split("=", 1) for c in opts.code) or {"this": str(HERE.parent)}
    codes = {k: str(Path(v).resolve()) for k, v in codes.items()}
    load0 = os.getloadavg()[0]
    if opts.own:
        with tempfile.TemporaryDirectory() as tmp:
            samples = measure_own(codes, opts.repeat, Path(tmp))
        print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
              f"{opts.repeat} rounds, warm caches, NumPy imported first\n")
        print(report_own(samples, list(codes)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        times = measure(codes, opts.repeat, Path(tmp), not opts.environment_bytecode)
    print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; best of "
          f"{opts.repeat} rounds, warm caches, bytecode "
          f"{'as the environment has it' if opts.environment_bytecode else 'kept'}\n")
    print(report(times, list(codes)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
