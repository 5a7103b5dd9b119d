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

**Measure.** The fused kernels of each flush are timed, and that time is shared among the
sites of its elementwise operations and reductions by operation count
(:func:`charge_flush`). A flush that compiled a kernel (:func:`cold_mark`) did work a warm
run does not repeat: it is charged by a model instead (``FLUSH_S + COLD_SHARE *
NumPy's time``). Loads from the disk cache recur in every run and are measured, so a script
learns from its second run what its warm runs cost.

**Cold flushes stay modelled, optimistically** (:func:`warm_seconds`). Charging a cold flush
what it measured less the compile, plan and partition time was tried (issue 29, branch
``slowprogs``) and reverted: what remains of a cold flush (Numba's first calls, its import) is
more than a warm run spends, so gemver and rule110 were judged losing, ran as plain NumPy, and
a plain NumPy run never learns again (gemver 3.55x to 1.19x, rule110 2.82x to 0.98x). A
decision that is too optimistic costs one slow warm run, which measures and corrects it; one
too pessimistic is permanent.

**Decision** (:func:`decide`, after the script): a site runs as NumPy when what fusing it
cost is at least what NumPy would have taken, summed over the flushes its operations ran in
(each flush whole: its operations fused together) and its eager operations:

    fused = eager * EAGER_S + sum over its flushes of (ops * RECORD_S + kernels' time, measured)
    numpy = sum over its flushes of (ops * NUMPY_CALL_S + elements * NumPy's time per element)

NumPy's time per element is timed once per operation, dtypes and size (a power of two, up
to ``SAMPLE_MAX`` elements: in cache or not) on scratch arrays (:func:`per_element`), on the
same machine, and kept with the decisions (``numpy-costs.json``). The eager operations are NumPy's calls either way, behind flamefuse's
wrapper (``EAGER_S`` each). The constants were measured on a 2-core x86-64 machine
(docs/never-slower.md).
**Hysteresis.** A site fused last run on measured (not modelled) flushes turns NumPy only on a
clear loss (fused at least ``1 + MARGIN`` times NumPy's estimate) or on a second loss in a row
(``lost``, kept with the decisions): one noisy run near break-even does not flip it. The
same holds for the script's net loss beside fused sites (below).
When fusing pays for no site, the whole script runs as plain NumPy: the next ``flamefuse fuse`` executes it
with the real ``numpy`` (no import hook, no wrapper: NumPy's speed, NumPy's results).
Otherwise the next run records only the remaining sites: creation functions and new
results at a NumPy site return plain ``ndarray`` objects computed by NumPy at once.

**The model is checked by measuring** (:mod:`flamefuse.runtime.probe`, the script probe). A
script the model judges fused is measured once both ways: a warm fused run's time in the
script (first line to last flush), then the next run's as plain NumPy; measures within 25%
are taken once more, and fused is kept only when at most 3% slower than NumPy, else the script
runs as plain NumPy from then on. The verdict is kept with the decisions (``probe``) and holds
(hysteresis: no run re-measures it) until the recorded elements change 2x or for 7 days, also
against the model's later decisions (the whole script or its sites NumPy's, losses held); a warm fused run the model turns
NumPy's is checked the same way before it goes plain for good. It
catches what no site's tally sees: mandelbrot's fallbacks (mask selections, fancy-index writes)
are charged to no site, and NumPy's time per element of complex ``abs`` on scratch arrays is
overestimated, so the model judged it paying at 0.63x of NumPy.

**Memory.** Decisions are kept per script (its resolved path, its text and its
arguments) as JSON entries of the store's kind ``adapt`` (:func:`load`, :func:`save`;
:mod:`flamefuse.store`: read only when the file is the user's own private one and stamped by
this version of flamefuse and its ``adapt`` modules on this machine); a script
whose text or arguments change is learned again. ``FLAMEFUSE_ADAPT=0`` (or
``flamefuse fuse --no-adapt``) fuses everything and learns afresh; ``--explain`` prints
each site's decision and why (:func:`explain`). The key and the reading are
:mod:`flamefuse.runtime.adapt_entry`'s (``load`` and ``enabled`` here are its own): a run
settled as plain NumPy reads its decisions without importing this module.

**Correctness.** A plain ``ndarray`` handed to a recorded operation is copied at that
moment (:func:`flamefuse.lazy.elementwise._lazy_inputs`), so a later write to it by the script
cannot change a pending result: running a site as NumPy never changes a result.
"""
from __future__ import annotations

import os
import sys

import numpy

from flamefuse import store
from flamefuse.runtime.adapt_entry import enabled, load  # noqa: F401  (adapt.load: the entry read)
from flamefuse.runtime.adapt_entry import key as entry_key

EAGER_S = 8e-6       # flamefuse's eager wrapper over NumPy's own call, per operation
RECORD_S = 5e-6      # recording one operation (the flush that runs it is measured)
NUMPY_CALL_S = 1.5e-6    # NumPy's own call, per operation
FLUSH_S = 100e-6     # a warm flush's fixed cost (plan look-up, launch), for a cold flush's model
COLD_SHARE = 0.5     # a cold flush's kernels modelled at this share of NumPy's element work
SAMPLE_MAX = 1 << 22  # NumPy's cost per element is timed on scratch arrays of at most this size
MARGIN = 0.25        # a site fused last run on measured flushes turns NumPy at once only when
# fusing cost at least (1 + MARGIN) x NumPy's estimate; a smaller loss must repeat on the next run

# (``os.path.realpath``: what ``pathlib.Path.resolve`` gives, without importing pathlib, about
# 4 ms of a fused run's start-up where flamefuse is installed from a wheel: docs/startup.md)
_PKG = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_NUMPY = os.path.dirname(os.path.realpath(numpy.__file__))
_PER_ELEMENT: dict = {}
_MEASURED: set = set()      # keys of _PER_ELEMENT timed in this process (save writes the costs then)


class Tally:
    """One site's counts: operations run eagerly through the wrapper, operations recorded and
    their elements, and for the flushes its operations ran in, what they cost fused
    (``fused_s``: recording and the measured kernels) and what NumPy would have taken
    (``numpy_s``: its calls and its time per element, :func:`per_element`). A flush is
    counted whole for each site in it: its operations fused together, so each site's
    operations are worth what the flush is worth."""
    __slots__ = ("eager", "recorded", "elements", "flushes_fused_s", "flushes_numpy_s", "unjudged",
                 "modelled")

    def __init__(self):
        self.eager = self.recorded = self.elements = self.unjudged = self.modelled = 0
        self.flushes_fused_s = self.flushes_numpy_s = 0.0

    def fused_s(self) -> float:
        """What fusing cost: the wrapper on eager operations, and its flushes."""
        return self.eager * EAGER_S + self.flushes_fused_s

    def numpy_s(self) -> float:
        """What NumPy would have taken for its flushes (the eager operations are NumPy's calls
        in both cases: only the wrapper counts, on the fused side)."""
        return self.flushes_numpy_s


LARGE = 1 << 15      # a product or linear-algebra call with a result this large (elements) or
# larger is BLAS-sized work that fusion may shorten (a 2x2 Kalman update in a loop is not)
UNJUDGED = frozenset({"product", "linalg"})
KINDS = frozenset({"ew", "reduce"})   # recorded kinds learned from (products and linear-algebra
# calls are BLAS-sized work: fusing them is never judged by elements, and a site whose arrays
# two or more LARGE ones use stays fused, so the script too: Tally.unjudged)


def per_element(kind: str, name: str, loop: tuple, n: int) -> float:
    """NumPy's seconds per element for this operation, these dtypes and about ``n`` elements
    (the next power of two, at most ``SAMPLE_MAX``: in cache or not), timed once per process on
    scratch arrays: the same machine, under the same load as the fused kernels it is compared
    with. A form it cannot time costs as a copy."""
    size = min(SAMPLE_MAX, 1 << max(12, (n - 1).bit_length()))
    key = (kind, name, loop, size)
    cost = _PER_ELEMENT.get(key)
    if cost is None:
        cost = _PER_ELEMENT[key] = _time_numpy(kind, name, loop, size)
        _MEASURED.add(key)
    return cost


def _time_numpy(kind: str, name: str, loop: tuple, size: int) -> float:
    from flamefuse.timing import seconds
    try:
        fn, args = _numpy_form(kind, name, loop, size)
        # the less disturbed of two (each makes a new result array); scratch values may overflow
        # or divide by zero: no warning or error of NumPy's reaches the script from here
        with numpy.errstate(all="ignore"):
            return min(seconds(fn, *args) for _ in range(2)) / size
    except Exception:                       # noqa: BLE001  (a form NumPy does not take: a copy's cost)
        return _time_numpy("ew", "copy", ("float64", "float64"), size) if name != "copy" else 0.5e-9


_UNIT = frozenset({"arcsin", "arccos", "arctanh"})   # defined on (-1, 1): scratch values inside


def _numpy_form(kind: str, name: str, loop: tuple, size: int):
    """NumPy's call and scratch inputs of ``size`` elements: ones for integers, values spread
    over [1, 2] for floats ([0.1, 0.9] for :data:`_UNIT`'s functions: NumPy's ``arcsin`` of
    values outside its domain takes 6.6 ns per element against 0.7 inside, 2026-11-26)."""
    lo, hi = (0.1, 0.9) if name in _UNIT else (1.0, 2.0)

    def scratch(dt):
        dt = numpy.dtype(dt)
        return numpy.ones(size, dt) if dt.kind in "biu" else numpy.linspace(lo, hi, size).astype(dt)
    ins = [scratch(dt) for dt in loop[:-1]]
    if kind == "reduce":
        return getattr(numpy, {"max": "maximum", "min": "minimum", "sum": "add", "prod": "multiply",
                               "any": "logical_or", "all": "logical_and"}[name]).reduce, ins[:1]
    if name == "copy":
        return numpy.copyto, (scratch(loop[-1]), ins[0], "unsafe")
    if name == "where":
        return numpy.where, (ins[0].astype(bool), ins[1], ins[2])
    if name.startswith("ipow") or name.startswith("hpow"):
        return numpy.power, (ins[0], float(name[4:]))
    return getattr(numpy, name), ins


def cold_mark() -> tuple:
    """Counts that change when a kernel is compiled: work done once (the disk cache keeps it),
    which a warm run does not repeat. Loading a kernel or a plan from the disk cache and
    building a plan (a clustered stage's plans, and those the plan cache does not keep, are
    made in every process) recur in every run: they are measured, not excused. A flush that ran
    as NumPy (or a filter loop that ran as NumPy's calls), or a linear-algebra chain that ran
    as its LAPACK calls, because its kernel was
    being compiled in the background (:mod:`flamefuse.runtime.compiler`) says nothing about
    what fusing it costs: it counts as cold too (modelled, never judged a loss)."""
    from flamefuse.runtime import compiler, kernel
    return (kernel.COUNTS.get("compiled", 0), kernel.COUNTS.get("interpreted", 0),
            compiler.STATS.get("deferred_flushes", 0), compiler.STATS.get("deferred_chains", 0),
            compiler.STATS.get("deferred_loops", 0))


def warm_seconds(mark: tuple, seconds: float) -> float | None:
    """What a flush that took ``seconds`` (its fused kernels) would cost warm, given
    :func:`cold_mark` before it: ``seconds`` when it compiled nothing, else None (the model:
    a cold flush's remainder after compiling still overstates a warm one, and a script judged
    wrongly as NumPy's is never measured again). A flush measured while a background compile
    goes on (:func:`flamefuse.runtime.compiler.busy`: this run's wanted kernels, or an earlier
    run's worker still building) is cold too: the compiler's processes take the cores the
    flush's thread team waits on. ising's fourth run in a fresh cache (two small flushes
    deferred, the 2000-operation one measured beside the compiler at 0.76 s against NumPy's
    estimated 0.24 s) made it plain NumPy for good, unprobed (a run that compiled is not
    probed); warm, the same flushes take 0.2-0.45 s."""
    from flamefuse.runtime import compiler
    return seconds if cold_mark() == mark and not compiler.busy() else None


def charge_flush(tallied: dict, seconds: float | None) -> None:
    """A flush's operations (``{tally: [ops, elements, NumPy's seconds]}``) are counted for
    their sites, with the flush's cost fused (recording, and ``seconds`` of its fused kernels;
    None for a cold flush: the model ``FLUSH_S + COLD_SHARE * NumPy's seconds``) and NumPy's."""
    ops = sum(c[0] for c in tallied.values())
    work = sum(c[2] for c in tallied.values())
    fused = ops * RECORD_S + (FLUSH_S + COLD_SHARE * work if seconds is None else seconds)
    numpy_s = ops * NUMPY_CALL_S + work
    for t, (n, elements, _) in tallied.items():
        t.modelled += seconds is None
        t.recorded += n
        t.elements += elements
        t.flushes_fused_s += fused
        t.flushes_numpy_s += numpy_s


class State:
    """What this process knows: ``learning`` (tallies are kept), ``numpy_sites`` (sites
    that run as NumPy), the tallies by site."""

    def __init__(self):
        self.learning = False
        self.numpy_sites: frozenset = frozenset()
        self.tallies: dict[tuple, Tally] = {}
        self.previous: dict | None = None    # last run's decisions (decide's hysteresis)


STATE = State()


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
    if STATE.learning:
        load_costs()
    sites = (decisions or {}).get("numpy_sites", []) if enabled() else []
    STATE.numpy_sites = frozenset((f, int(n)) for f, n in sites)
    STATE.previous = decisions if enabled() else None


def stop() -> None:
    STATE.learning = False
    STATE.numpy_sites = frozenset()


def decide(tallies: dict, keep: frozenset = frozenset(), previous: dict | None = None) -> dict:
    """``{"mode": "numpy"|"fused", "numpy_sites": [...], "sites": {...}}`` from this run's
    tallies; ``keep``: sites already run as NumPy this run (they stay so); ``previous``: last
    run's decisions (default: those this run started with, ``STATE.previous``).

    * A site whose arrays two or more large products or linear-algebra calls use is fused
      (``forced``: that work is not judged).
    * A site with nothing measured gets no decision: a line that makes arrays NumPy's
      ``meshgrid`` returns, whose work is recorded on the next line. Made NumPy's, every array
      after it would be too.
    * Any other site is NumPy's when fusing it cost at least NumPy's estimate.
    * With no forced site, the script runs as plain NumPy when what the NumPy-judged sites that
      would stay fused (below) lose is at least what the fused sites gain: go_fast's one-pass
      line saved 9 ms beside 0.7 s lost on the line of its scalar loop, which stayed fused.
    * The script runs as plain NumPy when no site is fused. Beside fused sites, only sites
      whose arrays were all small (no op recorded) make plain ndarrays. A large array made
      plain reaches the fused lines through copies (a NumPy array read by a recorded op is
      copied), and what is computed from it on plain arrays is plain too, fused lines
      included: markov's P ran 3.7 s against NumPy's 2.9 s.
    * Hysteresis: a site fused last run on measured flushes, losing now by less than ``MARGIN``
      for the first time, stays fused (``lost`` counts such runs); so does the script whose net
      loss is the first and small one.
    """
    if previous is None:
        previous = STATE.previous
    before = (previous or {}).get("sites", {}) if isinstance(previous, dict) else {}
    before = before if isinstance(before, dict) else {}
    lost = {}

    def settled(s):          # fused last run, decided on measured flushes: its earlier losses
        p = before.get(f"{s[0]}:{s[1]}")
        if not isinstance(p, dict) or p.get("numpy") or not p.get("measured"):
            return None
        return int(p.get("lost", 0)) if isinstance(p.get("lost", 0), int) else 0

    def loses(s, f, n):
        if f < n:
            return False
        strikes = settled(s) if tallies[s].modelled == 0 else None
        if strikes is None or f >= n * (1 + MARGIN) or strikes >= 1:
            return True
        lost[s] = strikes + 1           # a first small loss on a settled site: it stays fused
        return False

    forced = {s for s, t in tallies.items() if t.unjudged >= 2}
    measured = {s: (t.fused_s(), t.numpy_s()) for s, t in tallies.items()
                if s not in forced and (t.eager or t.recorded)}
    fused = forced | {s for s, (f, n) in measured.items() if not loses(s, f, n)}
    net_lost = 0
    if fused and not forced:
        # sites that would be NumPy's but stay fused beside fused ones (their arrays are large)
        # cost what they lose; fusing must gain more than that at the fused sites, else none is
        gain = sum(n - f for f, n in measured.values() if f < n)
        loss = sum(f - n for s, (f, n) in measured.items()
                   if f >= n and s not in fused and tallies[s].recorded)    # (held sites: fused)
        was = (previous or {}).get("net_lost", 0) if isinstance(previous, dict) else 0
        hold = (isinstance(previous, dict) and previous.get("mode") == "fused" and was == 0
                and loss < gain * (1 + MARGIN) and bool(before)
                and all(t.modelled == 0 for t in tallies.values()))
        if loss and loss >= gain and hold:
            net_lost = 1                # the first small net loss of a settled script: held
        elif loss and loss >= gain:
            fused, keep = set(), frozenset(keep) | frozenset(measured)
    numpy_sites_of = {s for s in measured if s not in fused and s not in forced}
    numpy_sites = set(keep) | {s for s in numpy_sites_of if not fused or tallies[s].recorded == 0}
    sites = {}
    for s in forced | set(measured):
        t = tallies[s]
        f, n = measured.get(s, (0.0, 0.0))
        sites[f"{s[0]}:{s[1]}"] = {"eager": t.eager, "recorded": t.recorded, "elements": t.elements,
                                   "fused_s": f, "numpy_s": n, "numpy": s in numpy_sites,
                                   "products": t.unjudged if s in forced else 0,
                                   "measured": t.modelled == 0, "lost": lost.get(s, 0)}
    return {"mode": "fused" if fused else "numpy", "net_lost": net_lost,
            "numpy_sites": sorted([list(s) for s in numpy_sites]),
            "fused_s": sum(f for f, _ in measured.values()),
            "numpy_s": sum(n for _, n in measured.values()), "sites": sites}


COSTS = "numpy-costs"       # the entry of NumPy's measured times per element


def save(script, argv: list, decisions: dict, previous: dict | None = None) -> None:
    """Keep ``decisions`` for the next run of this script, its text and arguments, unless they
    decide what ``previous`` (the decisions this run loaded) decided: fused, with the same
    NumPy sites, the same held losses (:func:`_held`: the next run then runs and judges as
    this one did; only the times kept with them are older) and the same script probe; and
    NumPy's times per element when
    this run measured a new one. A warm run whose decisions and probe (:mod:`flamefuse.runtime.probe`)
    hold writes nothing."""
    if not (isinstance(previous, dict) and previous.get("mode") == decisions["mode"] == "fused"
            and _held(previous) == _held(decisions) and previous.get("probe") == decisions.get("probe")):
        key = entry_key(script, argv)
        if key is None or store.put_json("adapt", key, decisions) is None:
            return
    if _MEASURED:
        _MEASURED.clear()
        store.put_json("adapt", COSTS, [[k, n, list(loop), size, cost]
                                        for (k, n, loop, size), cost in _PER_ELEMENT.items()])


def _held(decisions: dict) -> tuple:
    """What the next run's decision reads besides the times: the NumPy sites, and the memory of
    the hysteresis (a first small loss held, per site and for the script; whether a site's
    flushes were measured). Saving skips a run only when all of it is as loaded, else a held
    loss would be forgotten and held again at every run (never a second loss in a row)."""
    sites = decisions.get("sites")
    sites = sites if isinstance(sites, dict) else {}
    return (decisions.get("numpy_sites"), decisions.get("net_lost", 0),
            sorted((k, v.get("lost", 0), v.get("measured", True), v.get("numpy", False))
                   for k, v in sites.items() if isinstance(v, dict)))


def load_costs() -> None:
    """NumPy's times per element measured by earlier runs (:func:`per_element`)."""
    rows = store.get_json("adapt", COSTS)
    try:
        for kind, name, loop, size, cost in rows or ():
            if isinstance(cost, float) and isinstance(size, int):
                _PER_ELEMENT.setdefault((str(kind), str(name), tuple(map(str, loop)), size), cost)
    except (ValueError, TypeError):
        pass


def explain(decisions: dict, limit: int = 20) -> list[str]:
    """One line per site (the most expensive first) and the script's mode."""
    lines = [f"adapt: next run {'as plain NumPy' if decisions['mode'] == 'numpy' else 'fused'} "
             f"(fused this run {decisions['fused_s']:.3f} s of flamefuse's own time and flushes, "
             f"NumPy estimated {decisions['numpy_s']:.3f} s for the recorded operations"
             f"{'; a first small net loss: held fused' if decisions.get('net_lost') else ''})"]
    ranked = sorted(decisions["sites"].items(), key=lambda kv: -max(kv[1]["fused_s"], kv[1]["numpy_s"]))
    for site, s in ranked[:limit]:
        if s["products"]:
            why = f"{s['products']} large products or linear-algebra calls use its arrays"
        else:
            why = (f"fused {s['fused_s']:.4f} s {'>=' if s['fused_s'] >= s['numpy_s'] else '<'} "
                   f"NumPy {s['numpy_s']:.4f} s")
            if s.get("lost"):
                why += ", a first loss under the margin: held fused"
            elif not s.get("measured", True):
                why += ", compiled this run: modelled"
        lines.append(f"adapt: {site}: {'NumPy' if s['numpy'] else 'fused'} ({why}: {s['recorded']} "
                     f"recorded ops of {s['elements']} elements, {s['eager']} eager ops)")
    if len(ranked) > limit:
        lines.append(f"adapt: ... {len(ranked) - limit} more sites")
    return lines
