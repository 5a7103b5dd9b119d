"""``flamefuse derive SPEC``: list every fused loop invariant of a spec, with its strips.

``SPEC`` is a file (YAML or the reference tool's task syntax) or the name of a
shipped spec (``spd_inverse``; ``--list`` names them).  What is reported comes
from :func:`flamefuse.cli.derive_record.record`, kept in the user cache: a repeated
run imports neither the solver nor the derivation.  The modules a run needs are
imported in the function that needs them (start-up time: docs/derive-startup.md).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from flamefuse.search.bounded import ENGINES
from flamefuse.limits import LIMIT, TIME_LIMIT
from flamefuse.search.solutions import COMPUTED, PARTIAL, UNCOMPUTED

CELL = {COMPUTED: "[bold]■[/] computed", PARTIAL: "◧ partial", UNCOMPUTED: "□ uncomputed"}


def display_names(problem) -> dict[str, str]:
    """Region name -> how the user wrote it (``a_tl`` -> ``A_TL``) for spec problems."""
    names = {}
    for o in problem.operands:
        for part in ("TL", "TR", "BL", "BR", "T", "B", "L", "R"):
            names[f"{o.name.lower()}_{part.lower()}"] = f"{o.name}_{part}"
    return names


def strip_table(problem, inv, names: dict[str, str]):
    from rich.table import Table

    from flamefuse.search.solutions import strips
    table = Table(title="strips", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("region")
    for i, op in enumerate(problem.operations):
        table.add_column(f"{i}: {op.name}")
    table.add_column("C_R", justify="right")
    table.add_column("U_R", justify="right")
    for s in strips(problem, inv):
        table.add_row(names.get(s.region, s.region), *(CELL.get(c, "·") for c in s.cells), str(s.C), str(s.U))
    return table


def print_report(console, problem, rec) -> None:
    from flamefuse.pme.model import with_const_tasks
    from flamefuse.cli.derive_record import NotDerived
    from flamefuse.spec import show_readable
    full = with_const_tasks(problem)
    names = display_names(problem)
    invariants = rec.invariants
    console.print(f"[bold]{problem.name}[/]: {len(problem.operations)} operation(s), "
                  f"[bold]{len(invariants)}[/] fused loop invariant(s)")
    if problem.description:
        console.print(problem.description.strip(), style="dim")
    for op in problem.operations:
        if op.note:
            console.print(f"note: {op.name}: {op.note}", style="yellow")
    for n, (inv, loop) in enumerate(zip(invariants, rec.loops), 1):
        console.rule(f"invariant {n}")
        for i, (op, ks) in enumerate(zip(full.operations, inv.past)):
            console.print(f"operation {i} ({op.name}), past:")
            for k in ks:
                if op.tasks[k].kind != "const":
                    console.print("    " + show_readable(op.tasks[k], names), markup=False)
        console.print(strip_table(full, inv, names))
        if isinstance(loop, NotDerived):
            console.print(f"loop body: not derived: {loop.reason}", style="yellow", markup=False)
        else:
            console.print(f"loop body, traversing {loop.direction} (FLAME notation):")
            for operation, lines in loop.bodies:
                console.print(f"  {operation}:", markup=False)
                for line in lines:
                    console.print("    " + line, markup=False)
    if rec.why is not None:
        console.print(f"[bold red]no fused invariant[/]: {rec.why.summary}")
        console.print("the conflicting constraints (a minimal set, found by the solver):")
        for r in rec.why.reasons:
            console.print("  - " + r, markup=False)


def write_svgs(problem, rec, out_dir: Path) -> list[Path]:
    """One SVG per fused solution, or one conflict picture when there is none."""
    from flamefuse.pme.model import with_const_tasks
    from flamefuse.present.svg import conflict_svg, strips_svg
    full = with_const_tasks(problem)
    names = display_names(problem)
    from flamefuse.codegen import output_path
    if rec.why is not None:
        svg = conflict_svg(full, rec.why.operations, rec.why.regions, f"{problem.name}: no fused invariant", names)
        return [_write(output_path(out_dir, problem.name, "-conflict.svg", problem.source), svg)]
    return [_write(output_path(out_dir, problem.name, f"-{n}.svg", problem.source),
                   strips_svg(full, inv, f"{problem.name}: invariant {n}", names))
            for n, inv in enumerate(rec.invariants, 1)]


def _write(path: Path, text: str) -> Path:
    """``write_text_atomic`` with an OSError (a read-only or missing folder, a full disk) as a
    clear error."""
    from flamefuse.errors import fail
    from flamefuse.files import write_text_atomic
    try:
        return write_text_atomic(path, text)
    except OSError as err:
        fail(f"cannot write {path}: {err.strerror or err}", hint="choose a file or folder you can write")


def write_latex(problem, rec, path: Path) -> Path:
    from flamefuse.pme.model import with_const_tasks
    from flamefuse.present.latex import Solution, latex_document
    from flamefuse.cli.derive_record import NotDerived
    solutions = []
    for inv, loop in zip(rec.invariants, rec.loops):
        if isinstance(loop, NotDerived):
            solutions.append(Solution(inv, None, loop.reason))
        else:
            solutions.append(Solution(inv, tuple(lines for _, lines in loop.bodies), direction=loop.direction))
    return _write(path, latex_document(with_const_tasks(problem), solutions, display_names(problem)))


def run(args) -> int:
    from flamefuse.cli.derive_record import cached, record
    from flamefuse.shipped import spec_names, spec_path
    if args.list:
        print("\n".join(spec_names()))
        return 0
    if args.file is None:
        from flamefuse.errors import fail
        fail("derive needs a spec: a file, or the name of a shipped spec", hint="flamefuse derive --list names them")
    if args.limit < 0 or args.time_limit < 0:
        from flamefuse.errors import fail
        fail("--limit and --time-limit take a number >= 0 (0: no limit)")
    path = spec_path(args.file)
    text = _text(path)
    rec = cached(path, text, args.engine, args.limit) if text is not None else None
    if rec is not None:
        _note(rec.report)
    if rec is not None and args.json and not (args.emit or args.latex or args.svg):
        print(json.dumps(rec.report, indent=None if args.compact else 2))   # no spec parse, no search
        return 0
    from flamefuse.spec import load
    problem = load(path)           # a bad spec fails here, with its file and line
    rec = record(problem, path, text or "", args.engine, args.limit, args.time_limit, _progress)
    if not rec.cached:
        _note(rec.report)
    if args.emit:              # the synthesis of this run, or of the kept invariants (not searched again)
        from flamefuse.codegen import write_module
        from flamefuse.pipeline import synthesize
        synthesis = rec.synthesis if rec.synthesis is not None else synthesize(problem, invariants=rec.invariants)
        print(f"wrote {write_module(synthesis, Path(args.emit))}", file=sys.stderr)
    if args.latex:
        print(f"wrote {write_latex(problem, rec, Path(args.latex))}", file=sys.stderr)
    if args.svg:
        for out in write_svgs(problem, rec, Path(args.svg)):
            print(f"wrote {out}", file=sys.stderr)
    if args.json:
        print(json.dumps(rec.report, indent=None if args.compact else 2))
    else:
        from rich.console import Console
        print_report(Console(highlight=False), problem, rec)
    return 0


def _progress(text: str) -> None:
    print(f"flamefuse: {text}", file=sys.stderr, flush=True)


def _note(report: dict) -> None:
    """Say on stderr what a limited or stopped search left out (:meth:`bounded.Found.note`)."""
    note = report.get("note")
    if note:
        _progress(note)


def _text(path: Path) -> str | None:
    """The spec file's text, or None when it is not a regular file of at most MAX_BYTES or cannot
    be read (the loader then says why; never reads a device or a huge file whole)."""
    import stat
    from flamefuse.limits import MAX_BYTES
    try:
        if not stat.S_ISREG(Path(path).stat().st_mode):
            return None
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
        return data.decode() if len(data) <= MAX_BYTES else None
    except (OSError, UnicodeDecodeError):
        return None


def register(sub) -> None:
    p = sub.add_parser("derive", help="list the fused loop invariants of a spec (YAML or reference syntax)")
    p.add_argument("file", nargs="?",
                   help="a YAML spec file, a reference-syntax task list, or a shipped spec's name (see --list)")
    p.add_argument("--list", action="store_true", help="list the shipped specs (names derive accepts) and stop")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of tables")
    p.add_argument("--compact", action="store_true", help="with --json: one line")
    p.add_argument("--engine", choices=ENGINES, default="cpsat",
                   help="cpsat (OR-Tools, default), csp (python-constraint) or brute (exhaustive; small problems), for cross-checks")
    p.add_argument("--limit", type=int, default=LIMIT, metavar="N",
                   help=f"keep, derive and print at most N invariants (default {LIMIT}; 0: all); "
                        "says how many more were found")
    p.add_argument("--time-limit", type=float, default=TIME_LIMIT, metavar="S",
                   help=f"stop searching after S seconds (default {TIME_LIMIT:g}; 0: no limit); "
                        "progress is written to stderr on long searches")
    p.add_argument("--emit", metavar="DIR", help="write DIR/<name>.py: a Numba kernel per derivable invariant")
    p.add_argument("--latex", metavar="FILE", help="write a LaTeX document of the fused algorithms (FLAME layout)")
    p.add_argument("--svg", metavar="DIR", help="draw each fused solution's strips as DIR/<name>-<n>.svg")
    p.set_defaults(func=run)
