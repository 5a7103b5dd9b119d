"""The corpus under two checkouts of flamefuse, side by side in one run (before/after a change).

``flamefuse bench corpus_compare --code before=/path/a --code after=/path/b [--repeat R] [--only a,b]
[--settle K] [--env LABEL:VAR=VALUE] [--json OUT]``

Each ``--code LABEL=DIR`` is a checkout of flamefuse; its ``flamefuse fuse`` runs with ``DIR`` as
working folder and first on ``PYTHONPATH``, and its own kernel cache (a private temporary
folder); ``--env LABEL:VAR=VALUE`` (repeatable) sets an environment variable for that checkout's
runs only, so one checkout can be measured under two settings side by side (``--code off=DIR
--code on=DIR --env on:FLAMEFUSE_NUMPY_SIMD=1``: each label has its own kernel cache). Every run keeps its compiled bytecode under one scratch folder
(:func:`corpus.bytecode_env`), filled by the cold runs. Per program of ``benchmarks/corpus/`` (:data:`corpus.PROGRAMS`): one cold ``fuse``
run per checkout (it fills the cache and learns), ``--settle`` untimed warm runs per checkout
(default none: adaptive fusion's probe makes a fused script's third run plain NumPy, and a
verdict holds from the fourth), then ``--repeat`` rounds of plain NumPy and
each checkout's ``fuse`` in a rotating order, best (minimum) time of each, so that every
column saw the same load. Results are compared with NumPy's as ``flamefuse bench corpus``
does. Prints one table (kernel and whole-process ratios NumPy / flamefuse per checkout, the
spread of the NumPy samples as a noise measure, and the load) and the geometric means; writes
nothing into the repository (``--json`` saves the rows where asked).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (the programs and the result comparison)

from flamefuse.timing import timed  # noqa: E402


def _run(cmd: list[str], env: dict, cwd: str, timeout: float) -> dict:
    try:
        wall, proc = timed(subprocess.run, cmd, capture_output=True, text=True, env=env, cwd=cwd,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "TIMEOUT", "wall": math.inf, "part": math.inf}
    if proc.returncode:
        return {"status": "CRASH", "wall": math.inf, "part": math.inf, "error": proc.stderr[-2000:]}
    m = re.search(r"^TIME ([0-9.eE+-]+)", proc.stdout, re.M)
    return {"status": "ok", "wall": wall, "part": float(m.group(1)) if m else math.nan}


def measure(name: str, codes: dict, repeat: int, timeout: float, tmp: Path, cache: str = "",
            settle: int = 0, envs: dict | None = None) -> dict:
    n, _, rtol = corpus.PROGRAMS[name]
    script = str(corpus.HERE / f"{name}.py")
    base = corpus.bytecode_env(dict(os.environ, PYTHONWARNINGS="ignore"), Path(cache or tmp) / "pycache")
    runs = {"numpy": ([sys.executable, script, str(n), str(tmp / f"{name}.numpy.npz")], base, str(corpus.ROOT))}
    for label, folder in codes.items():
        env = dict(base, PYTHONPATH=folder, FLAMEFUSE_CACHE_DIR=str(Path(cache or tmp) / f"cache-{label}"),
                   **(envs or {}).get(label, {}))
        runs[label] = ([sys.executable, "-m", "flamefuse.cli", "fuse", script, str(n),
                        str(tmp / f"{name}.{label}.npz")], env, folder)
    row = {"program": name, "load": os.getloadavg()[0], "status": {}, "samples": {k: [] for k in runs}}
    for label in codes:
        cmd, env, cwd = runs[label]
        row["status"][label] = _run(cmd, env, cwd, timeout)["status"]
        corpus.wait_for_compiles(env, cwd)      # the cold run's background compiles: done first
        for _ in range(settle):                 # untimed warm runs: what adapt learns settles
            r = _run(cmd, env, cwd, timeout)
            if r["status"] != "ok":
                row["status"][label] = r["status"]
    order = list(runs)
    for i in range(repeat):
        for label in order[i % len(order):] + order[:i % len(order)]:
            cmd, env, cwd = runs[label]
            r = _run(cmd, env, cwd, timeout)
            if r["status"] != "ok":
                row["status"][label] = r["status"]
            row["samples"][label].append((r["wall"], r["part"]))
    for label in codes:
        if row["status"][label] == "ok":
            row["status"][label] = corpus.compare(str(tmp / f"{name}.numpy.npz"),
                                                  str(tmp / f"{name}.{label}.npz"), rtol)[0]
    return row


def _best(samples, i):
    return min(s[i] for s in samples)


def report(rows: list[dict], codes: list[str]) -> str:
    head = ["program", "numpy kernel s (spread)"] + [f"{c} kernel x" for c in codes] + \
           ["numpy process s"] + [f"{c} process x" for c in codes] + ["load", "result"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios = {c: ([], []) for c in codes}
    for r in rows:
        nk, npr = _best(r["samples"]["numpy"], 1), _best(r["samples"]["numpy"], 0)
        ks = sorted(s[1] for s in r["samples"]["numpy"])
        spread = (ks[-1] - ks[0]) / ks[0] if ks[0] > 0 else math.nan
        kx, px = [], []
        for c in codes:
            ok = r["status"][c] in ("bitwise", "close")
            k = nk / _best(r["samples"][c], 1) if ok else math.nan
            p = npr / _best(r["samples"][c], 0) if ok else math.nan
            kx.append(f"{k:.2f}"), px.append(f"{p:.2f}")
            if ok:
                ratios[c][0].append(k), ratios[c][1].append(p)
        status = ", ".join(f"{c} {r['status'][c]}" for c in codes)
        lines.append(f"| {r['program']} | {nk:.3f} ({spread:.0%}) | " + " | ".join(kx) + f" | {npr:.3f} | "
                     + " | ".join(px) + f" | {r['load']:.1f} | {status} |")
    gm = corpus._gmean
    lines.append("| geometric mean | | " + " | ".join(f"{gm(ratios[c][0]):.2f}" for c in codes) + " | | "
                 + " | ".join(f"{gm(ratios[c][1]):.2f}" for c in codes) + " | | |")
    for c in codes:
        below = [r["program"] for r in rows if r["status"][c] in ("bitwise", "close") and min(
            _best(r["samples"]["numpy"], 1) / _best(r["samples"][c], 1),
            _best(r["samples"]["numpy"], 0) / _best(r["samples"][c], 0)) < 0.9]
        lines.append(f"\n{c}: {len(below)} below 0.9x (kernel or process): {', '.join(below)}")
    return "\n".join(lines)


def parse_envs(items: list[str], codes: dict) -> dict:
    """``--env LABEL:VAR=VALUE`` items as ``{label: {var: value}}``; ValueError names a bad one."""
    envs: dict = {}
    for e in items:
        label, _, assign = e.partition(":")
        var, eq, value = assign.partition("=")
        if label not in codes or not eq or not var:
            raise ValueError(f"--env {e!r}: expected LABEL:VAR=VALUE with LABEL one of the --code labels")
        envs.setdefault(label, {})[var] = value
    return envs


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="flamefuse bench corpus_compare")
    p.add_argument("--code", action="append", required=True, help="LABEL=DIR, a flamefuse checkout")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", default="", help="comma-separated program names, measured in that order")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--json", default="")
    p.add_argument("--cache", default="", help="folder for the checkouts' kernel caches (kept between runs)")
    p.add_argument("--settle", type=int, default=4,
                   help="untimed warm runs per checkout after its cold run (adaptive fusion learns on "
                        "the first and its probe runs a checked script as plain NumPy once or twice: "
                        "the default 4 measures the mode the script settles in; 0 for a checkout "
                        "without the probe alone)")
    p.add_argument("--env", action="append", default=[],
                   help="LABEL:VAR=VALUE, an environment variable for that checkout's runs only")
    opts = p.parse_args(argv)
    codes = dict(c.split("=", 1) for c in opts.code)
    try:
        envs = parse_envs(opts.env, codes)
    except ValueError as e:
        p.error(str(e))
    codes = {k: str(Path(v).resolve()) for k, v in codes.items()}
    names = [n for n in opts.only.split(",") if n in corpus.PROGRAMS] if opts.only else list(corpus.PROGRAMS)
    rows, load0 = [], os.getloadavg()[0]
    with corpus.scratch() as tmp:
        for name in names:
            rows.append(measure(name, codes, opts.repeat, opts.timeout, Path(tmp), opts.cache, opts.settle,
                                envs))
            print(json.dumps(rows[-1]), flush=True)
    print(f"\nload average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"best of {opts.repeat} rounds after one cold run per checkout"
          f"{f' and {opts.settle} untimed warm runs' if opts.settle else ''}\n")
    print(report(rows, list(codes)))
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
