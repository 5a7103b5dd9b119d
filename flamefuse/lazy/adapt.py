"""Adaptive fusion: run as plain NumPy wherever recording does not pay, and remember it.

Recording an operation costs microseconds (a Python call, a view, an entry in the
recorder, a share of the flush and of the kernel launch); NumPy's own call costs about one.
Fusion repays that only when the operation touches enough elements for the memory
traffic it saves (temporaries never stored, one pass instead of several) to exceed it.
A script that works on two-element slices in a Python loop (a left-looking Cholesky
written with ``A[i, :j]``) is the opposite case: every operation pays the overhead and
saves nothing. This module is how ``flamefuse fuse`` tells the two apart and is never
much slower than NumPy on a warm run.

**Sites.** A site is a line of the user's script (file, line number): the innermost
frame outside flamefuse and NumPy when an array is created or an operation makes a new
array. Each :class:`~flamefuse.lazy.recorder.Base` made while learning carries its
site's :class:`Tally` (``Base.tally``): operations recorded on it and their elements,
and operations run eagerly (small computed inputs) through flamefuse's wrapper.

**Decision** (:func:`decide`, after the script): a site runs as NumPy when the
estimated overhead of fusing it exceeds the estimated gain:

    overhead = eager * EAGER_S + recorded * RECORD_S
    gain     = elements * GAIN_S      (elements of the recorded operations)

with ``EAGER_S`` (flamefuse's eager wrapper over NumPy's own call), ``RECORD_S``
(recording, planning and launching one operation) and ``GAIN_S`` (memory traffic saved
per element by fusion) measured on a 2-core x86-64 machine (see docs/never-slower.md).
When fusing pays for no site, the whole script runs as plain NumPy: the next ``flamefuse fuse`` executes it
with the real ``numpy`` (no import hook, no wrapper: NumPy's speed, NumPy's results).
Otherwise the next run records only the remaining sites: creation functions and new
results at a NumPy site return plain ``ndarray`` objects computed by NumPy at once.

**Memory.** Decisions are kept per script (its resolved path, its text and its
arguments) as JSON in the cache folder ``adapt`` (:func:`load`, :func:`save`); a script
whose text or arguments change is learned again. ``FLAMEFUSE_ADAPT=0`` (or
``flamefuse fuse --no-adapt``) fuses everything and learns afresh; ``--explain`` prints
each site's decision and why (:func:`explain`).

**Correctness.** A plain ``ndarray`` handed to a recorded operation is copied at that
moment (:func:`flamefuse.lazy.array._lazy_inputs`), so a later write to it by the script
cannot change a pending result: running a site as NumPy never changes a result.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy

EAGER_S = 10e-6      # flamefuse's eager path over NumPy's own call, per operation
RECORD_S = 6e-6      # recording + a share of flush, plan lookup and launch, per operation
GAIN_S = 0.7e-9      # memory traffic fusion saves, per element of a recorded operation
FORMAT = 1

_PKG = str(Path(__file__).resolve().parents[1])
_NUMPY = str(Path(numpy.__file__).resolve().parent)


class Tally:
    """One site's counts: operations run eagerly through the wrapper, operations recorded,
    elements of the recorded operations."""
    __slots__ = ("eager", "recorded", "elements")

    def __init__(self):
        self.eager = self.recorded = self.elements = 0

    def overhead(self) -> float:
        return self.eager * EAGER_S + self.recorded * RECORD_S

    def gain(self) -> float:
        return self.elements * GAIN_S


class State:
    """What this process knows: ``learning`` (tallies are kept), ``numpy_sites`` (sites
    that run as NumPy), the tallies by site."""

    def __init__(self):
        self.learning = False
        self.numpy_sites: frozenset = frozenset()
        self.tallies: dict[tuple, Tally] = {}


STATE = State()


def enabled() -> bool:
    return os.environ.get("FLAMEFUSE_ADAPT", "1") != "0"


def user_site(depth: int = 2) -> tuple:
    """``(file, line)`` of the innermost frame outside flamefuse and NumPy."""
    f = sys._getframe(depth)
    while f is not None:
        name = f.f_code.co_filename
        if not (name.startswith(_PKG) or name.startswith(_NUMPY) or name.startswith("<frozen")):
            return (name, f.f_lineno)
        f = f.f_back
    return ("?", 0)


def tally_here() -> Tally | None:
    """The current site's tally while learning (None otherwise): attached to a new Base."""
    if not STATE.learning:
        return None
    site = user_site(3)
    t = STATE.tallies.get(site)
    if t is None:
        t = STATE.tallies[site] = Tally()
    return t


def numpy_here() -> bool:
    """Whether the calling user line runs as plain NumPy (a site decided last run)."""
    return bool(STATE.numpy_sites) and user_site(3) in STATE.numpy_sites


def start(decisions: dict | None) -> None:
    """Begin a fused run: apply last run's NumPy sites (if any) and learn this run's."""
    STATE.tallies = {}
    STATE.learning = enabled()
    sites = (decisions or {}).get("numpy_sites", []) if enabled() else []
    STATE.numpy_sites = frozenset((f, int(n)) for f, n in sites)


def stop() -> None:
    STATE.learning = False
    STATE.numpy_sites = frozenset()


def decide(tallies: dict, keep: frozenset = frozenset()) -> dict:
    """``{"mode": "numpy"|"fused", "numpy_sites": [...], "sites": {...}}`` from this run's
    tallies; ``keep``: sites already run as NumPy this run (they stay so)."""
    numpy_sites, sites = set(keep), {}
    overhead = gain = 0.0
    for site, t in tallies.items():
        o, g = t.overhead(), t.gain()
        overhead, gain = overhead + o, gain + g
        as_numpy = o >= g
        if as_numpy:
            numpy_sites.add(site)
        sites[f"{site[0]}:{site[1]}"] = {"eager": t.eager, "recorded": t.recorded,
                                         "elements": t.elements, "overhead_s": o, "gain_s": g,
                                         "numpy": as_numpy}
    mode = "fused" if any(s not in numpy_sites for s in tallies) else "numpy"
    return {"format": FORMAT, "mode": mode, "numpy_sites": sorted([list(s) for s in numpy_sites]),
            "overhead_s": overhead, "gain_s": gain, "sites": sites}


def _file(script: Path, argv: list) -> Path | None:
    from flamefuse.cache import usable_cache_dir
    folder = usable_cache_dir("adapt")
    if folder is None:
        return None
    try:
        text = script.read_bytes()
    except OSError:
        return None
    key = json.dumps([str(script.resolve()), list(map(str, argv))]).encode()
    digest = hashlib.sha256(key + b"\0" + text).hexdigest()[:32]
    return folder / f"{digest}.json"


def load(script: Path, argv: list) -> dict | None:
    """Last run's decisions for this script, its text and arguments; None if none (or damaged)."""
    if not enabled():
        return None
    path = _file(script, argv)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("mode") not in ("numpy", "fused"):
        return None
    sites = data.get("numpy_sites")
    if not isinstance(sites, list) or not all(isinstance(s, list) and len(s) == 2 for s in sites):
        return None
    return data


def save(script: Path, argv: list, decisions: dict) -> None:
    from flamefuse.files import write_text_atomic
    path = _file(script, argv)
    if path is None:
        return
    try:
        write_text_atomic(path, json.dumps(decisions))
    except OSError:
        pass


def explain(decisions: dict, limit: int = 20) -> list[str]:
    """One line per site (the most expensive first) and the script's mode."""
    lines = [f"adapt: next run {'as plain NumPy' if decisions['mode'] == 'numpy' else 'fused'} "
             f"(estimated overhead of fusing {decisions['overhead_s']:.3f} s, gain "
             f"{decisions['gain_s']:.3f} s)"]
    ranked = sorted(decisions["sites"].items(), key=lambda kv: -max(kv[1]["overhead_s"], kv[1]["gain_s"]))
    for site, s in ranked[:limit]:
        why = "overhead >= gain" if s["numpy"] else "gain > overhead"
        lines.append(f"adapt: {site}: {'NumPy' if s['numpy'] else 'fused'} ({why}: {s['recorded']} "
                     f"recorded ops of {s['elements']} elements, {s['eager']} eager ops)")
    if len(ranked) > limit:
        lines.append(f"adapt: ... {len(ranked) - limit} more sites")
    return lines
