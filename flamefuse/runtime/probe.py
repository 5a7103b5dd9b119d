"""Adaptive fusion's script probe: a fused run the model judged paying is checked against NumPy.

The model of :mod:`flamefuse.runtime.adapt` weighs what fusing cost at each site against an
estimate of NumPy's time (its calls, its time per element on scratch arrays). Where the estimate
is wrong the script is fused and slower than NumPy, and no site's tally shows it: mandelbrot's
boolean-mask selections and fancy-index writes run as fallbacks whose cost is charged to no
site, and NumPy's time per element of its complex ``abs`` was overestimated (fused 0.355 s,
NumPy 0.237 s). So the model's "fused" is checked where it can be: by running the script both
ways and measuring.

**The measure** of a run is what the user waits for: from flamefuse's import
(:data:`flamefuse.cli.STARTED`) to the end of the script, and of the fused run's last flush.
flamefuse's start-up is counted: the fused mode imports its runtime and loads its kernels (20-30
ms warm on the 2-core machine, docs/startup.md), the plain one imports NumPy only (the probe's
plain run imports it before the script, as the fused start-up does). Leaving it out judged a
script fused on its own time while its process was slower: go_fast (a 40 ms kernel, no gain
from fusion) measured 1-3% faster in the script and 13% slower as a process (issue 29's
corpus). Exit (decisions kept, libraries built) is not counted: it is a warm run's few ms.

**Rounds.**

1. A fused run that is warm (every flush measured, none compiled or deferred: ``measured`` on
   every site), ended without an error, judged fused by the model with the NumPy sites it ran
   with (or judged NumPy's after a fused run: below), and has no verdict yet, keeps its
   measure (``probe.fused``).
2. The next run of the same script and arguments runs as plain NumPy (the mode adapt has for
   scripts it decided NumPy's) and keeps its measure (``probe.numpy``).
3. When the two are within ``CLOSE`` of each other, one more round is run (a fused run, then a
   plain one) and the best (minimum) of each is compared: a close call under load is measured
   twice before it is settled.
4. **Verdict**: fused when its best is at most ``1 + MARGIN`` times NumPy's, else plain NumPy
   (the script's mode becomes ``numpy``: it runs as plain NumPy from then on). A tie goes to
   NumPy: its speed and overhead are the guarantee.

**Hysteresis** (docs/never-slower.md, rule 8 for sites): a verdict is not measured again at each
run, so load noise does not flip it. A fused verdict also holds against the model: a later run
keeps the decisions the verdict was measured with, whatever the model makes of its timings --
the whole script NumPy's (its estimates are noisy under load, and a plain run never learns
again), other sites NumPy's, or a site's first small loss held (under load each was a warm
run's write, and two in a row made a site NumPy's: a script probed 3x faster fused flipped
its sites' losses run after run, tests/runtime/test_adapt.py). And a warm fused run that the
model turns NumPy's before any verdict is checked the same way: its measure is kept with the
decisions it ran with, the next run is the plain run the model wanted, and the verdict decides
(kmeans's model estimate is within a few % of its fused cost, and flipped it to NumPy on
loaded runs though fused measures 2x faster). A run that compiled (cold) is not: the model's
NumPy stands (a scalar loop learned on its first run runs plain from its second). It is probed again only when the work changed: a fused
script whose recorded elements (deterministic, not timed) differ from the probed run's by a
factor ``DRIFT`` or more, or any verdict older than ``MAX_AGE_S`` (a plain run records nothing,
so age is its only signal; a script whose text or arguments change has a new entry anyway).
While no round is due a run writes nothing (a warm run's cache stays untouched); only the runs
that take a measure or settle a verdict write the entry.

**Switches.** ``FLAMEFUSE_PROBE=0`` turns the probe off (the model alone decides; a verdict
already kept still holds). ``FLAMEFUSE_PROBE_SECONDS=F,N`` is a test hook: the fused runs
measure ``F`` seconds and the plain ones ``N``, whatever the clock says.

The state is a plain dict kept in the script's adapt entry (``decisions["probe"]``):
``{"fused": [s, ...], "numpy": [s, ...], "verdict": None | "fused" | "numpy", "at": time,
"elements": n}``. A damaged one is ignored (treated as none).
"""
from __future__ import annotations

import time

from flamefuse import switches

MARGIN = 0.03        # fused is kept when its best measure is at most (1 + MARGIN) x NumPy's
CLOSE = 0.25         # measures within this of each other (either way): one more round first
# (10% was tried: single runs at load 6-9 on the 2 cores differ by more; arc_distance and
# mc_pi_legacy, 1.2-1.7x fused when quiet, were measured 13-16% slower fused and went NumPy)
ROUNDS = 2           # at most this many measures per mode before a verdict
DRIFT = 2.0          # a fused verdict is probed again when the recorded elements change this much
MAX_AGE_S = 7 * 86400.0   # any verdict is probed again after this long


def enabled() -> bool:
    return switches.on("FLAMEFUSE_PROBE")


def measured(mode: str, seconds: float) -> float:
    """The measure of a run in ``mode`` (``"fused"`` or ``"numpy"``): ``seconds``, or the test
    hook's value (``FLAMEFUSE_PROBE_SECONDS=F,N``)."""
    fake = switches.text("FLAMEFUSE_PROBE_SECONDS")
    if fake:
        try:
            f, n = (float(x) for x in fake.split(","))
            return f if mode == "fused" else n
        except ValueError:
            pass
    return seconds


def state(decisions: dict | None) -> dict | None:
    """The probe kept with ``decisions``, or None (none, or damaged)."""
    p = decisions.get("probe") if isinstance(decisions, dict) else None
    if not isinstance(p, dict):
        return None
    ok = (all(isinstance(p.get(k), list) and all(isinstance(x, (int, float)) and x >= 0 for x in p[k])
              for k in ("fused", "numpy"))
          and p.get("verdict") in (None, "fused", "numpy")
          and isinstance(p.get("at", 0), (int, float)) and isinstance(p.get("elements", 0), int))
    return p if ok else None


def wants_plain(decisions: dict | None) -> bool:
    """Whether this run is a probe's plain NumPy run: the script is fused, a round is open and
    its fused measure is taken."""
    p = state(decisions)
    return (enabled() and p is not None and decisions.get("mode") == "fused" and p["verdict"] is None
            and len(p["fused"]) > len(p["numpy"]))


def expired(decisions: dict | None, now: float | None = None) -> bool:
    """Whether a script run as NumPy by a probe's verdict is due a fused run again (its verdict
    is older than ``MAX_AGE_S``)."""
    p = state(decisions)
    return (enabled() and p is not None and p["verdict"] == "numpy"
            and (now if now is not None else time.time()) - p.get("at", 0) >= MAX_AGE_S)


def _elements(decisions: dict) -> int:
    sites = decisions.get("sites")
    return sum(int(s.get("elements", 0)) for s in sites.values() if isinstance(s, dict)) \
        if isinstance(sites, dict) else 0


def _warm(learned: dict) -> bool:
    sites = learned.get("sites")
    return isinstance(sites, dict) and all(isinstance(s, dict) and s.get("measured", True)
                                           for s in sites.values())


def after_fused(learned: dict, previous: dict | None, seconds: float, ok: bool,
                now: float | None = None) -> dict:
    """``learned`` (this fused run's decisions, :func:`flamefuse.runtime.adapt.decide`) with the
    probe the next run reads: the one ``previous`` held, carried over unchanged where no round
    is due (so that a warm run writes nothing), or a round opened or continued with this run's
    measure ``seconds`` (``ok``: the script ended without an error)."""
    now = now if now is not None else time.time()
    p = state(previous)
    elements = _elements(learned)
    settled = (p is not None and p["verdict"] == "fused" and now - p.get("at", 0) < MAX_AGE_S
               and 1 / DRIFT < max(elements, 1) / max(1, p.get("elements", 0)) < DRIFT)
    fused_before = isinstance(previous, dict) and previous.get("mode") == "fused"
    if settled and fused_before:
        # measured faster fused: the decisions it was measured with hold, whatever the model
        # makes of this run's timings (its NumPy, other NumPy sites, a held loss): the work is
        # the same, so only load moved them, and a warm run writes nothing
        return previous
    target = learned                        # the decisions the next run reads
    if learned.get("mode") != "fused":
        if not (enabled() and fused_before and ok and _warm(learned)):
            return learned                  # the model's own NumPy decision (a cold or failed run)
        # a warm fused run the model now judges NumPy's: checked too (the plain run it wants
        # is the probe's), with the decisions this run ran with kept for a fused verdict
        target, same_sites = previous, True
    else:
        if not enabled():
            return dict(learned, probe=p) if p is not None else learned
        same_sites = learned.get("numpy_sites") == (previous or {}).get("numpy_sites", [])
    if not (ok and _warm(learned) and same_sites):
        return dict(learned, probe=p) if p is not None else learned
    if p is not None and p["verdict"] is None and len(p["fused"]) == len(p["numpy"]) > 0 \
            and p.get("elements") == elements:
        p = dict(p, fused=p["fused"] + [seconds])          # a close call's second round
    else:
        p = {"fused": [seconds], "numpy": [], "verdict": None, "at": now, "elements": elements}
    return dict(target, probe=p)


def after_plain(decisions: dict, seconds: float, now: float | None = None) -> dict:
    """``decisions`` after a probe's plain run that measured ``seconds``: a verdict (the mode
    ``numpy`` when NumPy won), or one more round when the two measures are close."""
    p = dict(state(decisions))
    p["numpy"] = p["numpy"] + [seconds]
    f, n = min(p["fused"]), min(p["numpy"])
    if abs(f - n) < CLOSE * max(n, 1e-9) and len(p["numpy"]) < ROUNDS:
        return dict(decisions, probe=p)     # close: a fused run and a plain run again
    p["verdict"] = "fused" if f <= n * (1 + MARGIN) else "numpy"
    p["at"] = now if now is not None else time.time()
    return dict(decisions, probe=p, mode="fused" if p["verdict"] == "fused" else "numpy")


def explain(decisions: dict | None, overruled: bool = False) -> list[str]:
    """What the probe measured and decided (``--explain``); ``overruled``: the model judged the
    script otherwise this run (NumPy's, or other sites NumPy's) and the probe's measured verdict
    (fused), with the decisions it was measured with, held."""
    p = state(decisions)
    if p is None:
        return []
    runs = f"fused {_list(p['fused'])}, NumPy {_list(p['numpy'])}"
    if p["verdict"] is not None:
        return [f"adapt: script probe: {runs} -> {'fused' if p['verdict'] == 'fused' else 'NumPy'} "
                f"(measured: start-up and script; fused is kept when at most "
                f"{1 + MARGIN:.2f}x NumPy's; probed again when its work changes or after "
                f"{MAX_AGE_S / 86400:.0f} days"
                f"{'; the model judged it otherwise this run: the measured verdict holds' if overruled else ''})"]
    if len(p["fused"]) > len(p["numpy"]):
        return [f"adapt: script probe: {runs}; the next run runs as plain NumPy to compare"]
    return [f"adapt: script probe: {runs}: within {CLOSE:.0%}, one more round (a fused run, then a "
            f"plain one)"]


def _list(xs: list) -> str:
    return "/".join(f"{x:.3f}" for x in xs) + " s" if xs else "-"
