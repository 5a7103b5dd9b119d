"""What ``flamefuse derive`` reports about a problem, computed once and kept in the user cache.

``record(problem, path, text, engine) -> Record``: made from the problem's
:class:`flamefuse.pipeline.Synthesis` (kept in ``Record.synthesis`` for the run that
computed it: ``--emit`` reads it), the fused invariants (the
past tasks of each operation), per invariant the derived loop (its direction
and, per operation, the body in FLAME notation) or why it does not derive,
when there is no invariant the solver's explanation, and ``report``: the
object ``derive --json`` prints.  ``cached(path, text, engine) -> Record |
None`` is the kept record alone (no spec parse: ``derive --json`` prints its
``report``).  All plain data, kept as the JSON store entry ``<cache>/derive/<key>.json``
(:mod:`flamefuse.store`, kind ``derive``), ``key`` the SHA-256 of the engine, the limit and
the spec file (its path and text), and whether ``FLAMEFUSE_DERIVE_PROVE`` is on; the entry's stamp holds flamefuse's version and the
generator's source (the packages ``spec``, ``pme``, ``search`` and ``derive``, the pipeline and
this module: the kind ``derive`` of :mod:`flamefuse.cache_store`), so a changed
spec or derivation code is derived again.  A repeated ``derive`` then imports neither the solver
(OR-Tools) nor the derivation (NumPy): ``--json`` costs Python's start
and reading the record; the text report adds the spec's parse and rich.  A record that is missing, unreadable or not of this
shape is computed again and rewritten; without a usable cache folder, or with
``FLAMEFUSE_DERIVE_CACHE=0`` (:mod:`flamefuse.switches`), nothing is kept.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from flamefuse.pme.invariant import Invariant
from flamefuse.pme.model import Problem, with_const_tasks
from flamefuse.switches import on



@dataclass(frozen=True)
class Loop:
    """A derived fused loop: direction, and per operation (name, FLAME lines)."""
    direction: str
    bodies: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class NotDerived:
    reason: str


@dataclass(frozen=True)
class Why:
    """Why no fused invariant exists (:class:`flamefuse.search.explain.Explanation`, as data)."""
    operations: tuple[int, ...]
    regions: tuple[str, ...]
    reasons: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class Record:
    invariants: tuple[Invariant, ...]
    loops: tuple[Loop | NotDerived, ...]
    why: Why | None
    report: dict                   # what ``derive --json`` prints
    cached: bool = False           # served from the user cache
    synthesis: object = field(default=None, compare=False)   # the Synthesis, when computed by this run


def key(path: Path, text: str, engine: str, limit: int = 0) -> str:
    h = hashlib.sha256()
    for part in (engine, str(limit), str(Path(path).resolve()), text):
        h.update(part.encode() + b"\0")
    if on("FLAMEFUSE_DERIVE_PROVE"):       # the SymPy cross-check is a run of its own, not served the default's
        h.update(b"prove\0")
    return h.hexdigest()


def compute(problem: Problem, engine: str, limit: int = 0, time_limit: float | None = None,
            progress=None) -> Record:
    """The record of :func:`flamefuse.pipeline.synthesize` (``engine``: cpsat, csp or brute; at
    most ``limit`` invariants kept, ``time_limit`` seconds): every invariant kept and its
    derived loop, the explanation of an empty answer of a complete search. The report has
    ``more`` and ``complete`` and, when something was left out, ``note`` (the sentence the
    command prints)."""
    from flamefuse.derive import NotDerivable
    from flamefuse.pipeline import synthesize
    s = synthesize(problem, engine, limit, time_limit, progress)
    loops = tuple(NotDerived(loop.reason) if isinstance(loop, NotDerivable) else
                  Loop(loop.direction, tuple((b.operation, tuple(b.lines())) for b in loop.bodies))
                  for loop in s.loops)
    e = s.why
    why = None if e is None else Why(tuple(e.operations), tuple(e.regions), tuple(e.reasons), e.summary)
    rec = Record(s.invariants, loops, why, {}, synthesis=s)
    rec.report.update(report(problem, rec))
    rec.report.update(more=s.more, complete=s.complete)
    if s.note:
        rec.report["note"] = s.note
    return rec


def report(problem: Problem, rec: Record) -> dict:
    """The object ``flamefuse derive --json`` prints."""
    full = with_const_tasks(problem)
    out = {"name": problem.name, "operations": [op.name for op in problem.operations],
           "count": len(rec.invariants), "invariants": [inv.states(full) for inv in rec.invariants],
           "loops": [_loop_json(loop) for loop in rec.loops]}
    if rec.why is not None:
        out["explanation"] = {"summary": rec.why.summary, "operations": list(rec.why.operations),
                              "regions": list(rec.why.regions), "reasons": list(rec.why.reasons)}
    return out


def _loop_json(loop) -> dict:
    if isinstance(loop, NotDerived):
        return {"derived": False, "reason": loop.reason}
    return {"derived": True, "direction": loop.direction, "body": [list(lines) for _, lines in loop.bodies]}


def to_json(rec: Record) -> dict:
    return {"invariants": [[list(ks) for ks in inv.past] for inv in rec.invariants],
            "loops": [{"reason": lp.reason} if isinstance(lp, NotDerived) else
                      {"direction": lp.direction, "bodies": [[op, list(lines)] for op, lines in lp.bodies]}
                      for lp in rec.loops],
            "why": None if rec.why is None else {"operations": list(rec.why.operations),
                                                 "regions": list(rec.why.regions),
                                                 "reasons": list(rec.why.reasons), "summary": rec.why.summary},
            "report": rec.report}


def from_json(data: dict) -> Record:
    """The record of ``to_json``'s data; KeyError / TypeError / ValueError for anything else."""
    invariants = tuple(Invariant(tuple(tuple(int(k) for k in ks) for ks in inv)) for inv in data["invariants"])
    loops = tuple(NotDerived(str(lp["reason"])) if "reason" in lp else
                  Loop(str(lp["direction"]), tuple((str(op), tuple(str(x) for x in lines))
                                                   for op, lines in lp["bodies"]))
                  for lp in data["loops"])
    w = data["why"]
    why = None if w is None else Why(tuple(int(i) for i in w["operations"]), tuple(str(r) for r in w["regions"]),
                                     tuple(str(r) for r in w["reasons"]), str(w["summary"]))
    if len(loops) != len(invariants) or not isinstance(data["report"], dict):
        raise ValueError("not a record")
    return Record(invariants, loops, why, data["report"], cached=True)


def cached(path: Path, text: str, engine: str, limit: int = 0) -> Record | None:
    """The kept record of the spec file ``path`` (content ``text``) searched with ``limit``, or
    None (:func:`flamefuse.store.get_json`: only the user's own private file of this version)."""
    from flamefuse import store
    data = store.get_json("derive", key(path, text, engine, limit))
    try:
        return None if data is None else from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None                # damaged: derive again


def record(problem: Problem, path: Path, text: str, engine: str, limit: int = 0,
           time_limit: float | None = None, progress=None) -> Record:
    """The record of ``problem`` (loaded from ``path``, whose content is ``text``): kept or computed
    (see :func:`compute`); one a time limit cut short is not kept."""
    from flamefuse import store
    rec = cached(path, text, engine, limit)
    if rec is not None and all(len(inv.past) == len(problem.operations) for inv in rec.invariants):
        return rec
    rec = compute(problem, engine, limit, time_limit, progress)
    if rec.report.get("complete", True):        # a read-only cache: the next run derives again
        store.put_json("derive", key(path, text, engine, limit), to_json(rec))
    return rec
