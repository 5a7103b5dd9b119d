"""The synthesis pipeline: a Problem, its fused invariants, their loops, their kernels.

``synthesize(problem, engine="cpsat", limit=0, time_limit=None, progress=None,
invariants=None) -> Synthesis`` runs the stages once, in order:

1. the search (:func:`flamefuse.search.bounded.search`): the fused invariants (``engine``
   cpsat, csp or brute; at most ``limit``, 0: all; ``time_limit`` seconds, None: none);
   given ``invariants`` (a kept record's) it is not run again;
2. the derivation (:func:`flamefuse.derive.derive_solution`): per invariant the derived
   loop or :class:`~flamefuse.derive.NotDerivable` with the reason;
3. the lowering (:func:`flamefuse.codegen.ir.lower`): per derived loop the kernel IR, or
   why it has no code (:class:`~flamefuse.derive.evaluate.Unsupported`).

Every consumer reads the one :class:`Synthesis`: ``flamefuse derive`` (report, JSON, LaTeX,
SVG and ``--emit``: :mod:`flamefuse.cli.derive`), the code generator
(:func:`flamefuse.codegen.emit_module`), :func:`regenerate_all` (the shipped
``generated/`` modules), Dask tile graphs (:mod:`flamefuse.dask.graph`) and run-time
chains (:mod:`flamefuse.synth.kernels`). The kernel IR and the explanation of an empty
answer (:func:`flamefuse.search.explain.explain`) are computed when first asked for, once.
This module imports the stages when :func:`synthesize` runs (start-up time).
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flamefuse.derive import DerivedLoop, NotDerivable
    from flamefuse.pme.invariant import Invariant
    from flamefuse.pme.model import Problem

PROGRESS_S = 2.0            # seconds between two progress lines while deriving


@dataclass(frozen=True)
class Synthesis:
    """What the pipeline made of ``problem`` (see the module doc). Variant ``k`` (1-based) of
    the invariants is named ``<problem>_v<k>``."""
    problem: Problem
    invariants: tuple[Invariant, ...]
    loops: tuple[DerivedLoop | NotDerivable, ...]     # one per invariant
    more: int = 0               # invariants found beyond the limit
    complete: bool = True       # the search ran to its end
    note: str | None = None     # what the search left out, said in a sentence

    def name(self, k: int) -> str:
        """The variant name of invariant ``k`` (1-based)."""
        return f"{self.problem.name}_v{k}"

    @functools.cached_property
    def lowered(self) -> tuple:
        """Per invariant the kernel IR (:class:`flamefuse.codegen.ir.Kernel`) or the reason it
        has none (a str: not derivable, or the IR has no form for a statement)."""
        from flamefuse.codegen.ir import lower
        from flamefuse.derive import NotDerivable
        from flamefuse.derive.evaluate import Unsupported
        out = []
        for k, loop in enumerate(self.loops, 1):
            if isinstance(loop, NotDerivable):
                out.append(loop.reason)
                continue
            try:
                out.append(lower(self.problem, self.name(k), loop))
            except Unsupported as why:
                out.append(str(why))
        return tuple(out)

    @property
    def made(self) -> list:
        """(variant name, past-task count, Kernel) for each invariant with a kernel, in order."""
        return [(self.name(k), sum(len(p) for p in inv.past), ir)
                for k, (inv, ir) in enumerate(zip(self.invariants, self.lowered), 1) if not isinstance(ir, str)]

    @property
    def skipped(self) -> dict:
        """Variant name -> why it has no kernel, for the others."""
        return {self.name(k): ir for k, ir in enumerate(self.lowered, 1) if isinstance(ir, str)}

    @functools.cached_property
    def why(self):
        """Why there is no fused invariant (:class:`flamefuse.search.explain.Explanation`), for a
        complete search that found none; else None."""
        if self.invariants or not self.complete:
            return None
        from flamefuse.search.explain import explain
        return explain(self.problem)


def synthesize(problem: Problem, engine: str = "cpsat", limit: int = 0, time_limit: float | None = None,
               progress=None, invariants=None) -> Synthesis:
    """See the module doc. ``progress(text)`` is told about a long search or derivation."""
    from flamefuse.derive import derive_solution
    more, complete, note = 0, True, None
    if invariants is None:
        from flamefuse.search.bounded import search
        found = search(problem, engine, limit=limit, time_limit=time_limit, progress=progress)
        invariants, more, complete, note = found.invariants, found.more, found.complete, found.note()
    invariants = tuple(invariants)
    loops = []
    start = shown = time.perf_counter()
    for n, inv in enumerate(invariants, 1):
        loops.append(derive_solution(problem, inv))
        now = time.perf_counter()
        if progress is not None and now - shown >= PROGRESS_S:
            shown = now
            progress(f"derived {n} of {len(invariants)} loops in {now - start:.0f} s")
    return Synthesis(problem, invariants, tuple(loops), more, complete, note)


def regenerate_all(specs_dir, out_dir) -> list[Path]:
    """Every ``*.yaml`` spec of ``specs_dir`` with at least one kernel, its module written to
    ``out_dir`` (the committed ``generated/`` modules: :func:`flamefuse.codegen.write_module`)."""
    from flamefuse.codegen import write_module
    from flamefuse.spec import load
    written = []
    for spec in sorted(Path(specs_dir).glob("*.yaml")):
        synthesis = synthesize(load(spec))
        if synthesis.made:
            written.append(write_module(synthesis, out_dir))
    return written


__all__ = ["Synthesis", "regenerate_all", "synthesize"]
