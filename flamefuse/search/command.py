"""``flamefuse derive FILE``: list every fused loop invariant of a spec, with its strips."""
from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table

from pathlib import Path

from flamefuse.errors import fail
from flamefuse.pme.model import Problem, with_const_tasks
from flamefuse.derive import NotDerivable, derive_solution
from flamefuse.files import write_text_atomic
from flamefuse.present.latex import Solution, latex_document
from flamefuse.present.svg import conflict_svg, strips_svg
from flamefuse.search.bounded import LIMIT, TIME_LIMIT
from flamefuse.search.brute import enumerate_brute
from flamefuse.search.csp import enumerate_csp
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.search.explain import explain
from flamefuse.search.solutions import COMPUTED, PARTIAL, UNCOMPUTED, Invariant, strips
from flamefuse.spec import load, show_readable

ENGINES = {"cpsat": enumerate_cpsat, "csp": enumerate_csp, "brute": enumerate_brute}
CELL = {COMPUTED: "[bold]■[/] computed", PARTIAL: "◧ partial", UNCOMPUTED: "□ uncomputed"}


def display_names(problem: Problem) -> dict[str, str]:
    """Region name -> how the user wrote it (``a_tl`` -> ``A_TL``) for spec problems."""
    names = {}
    for o in problem.operands:
        for part in ("TL", "TR", "BL", "BR", "T", "B", "L", "R"):
            names[f"{o.name.lower()}_{part.lower()}"] = f"{o.name}_{part}"
    return names


def to_json(problem: Problem, invariants: list[Invariant], complete: bool = True, progress=None) -> dict:
    full = with_const_tasks(problem)
    out = {"name": problem.name, "operations": [op.name for op in problem.operations],
           "count": len(invariants), "invariants": [inv.states(full) for inv in invariants],
           "loops": [_loop_json(loop) for loop in _derived(problem, invariants, progress)]}
    if not invariants and complete:
        why = explain(problem)
        out["explanation"] = {"summary": why.summary, "operations": list(why.operations),
                              "regions": list(why.regions), "reasons": list(why.reasons)}
    return out


def _derived(problem: Problem, invariants: list[Invariant], progress=None):
    """The derived loop of each invariant, in order; ``progress(text)`` about every 2 s."""
    import time
    start = shown = time.perf_counter()
    for n, inv in enumerate(invariants, 1):
        yield derive_solution(problem, inv)
        now = time.perf_counter()
        if progress is not None and now - shown >= 2.0:
            shown = now
            progress(f"derived {n} of {len(invariants)} loops in {now - start:.0f} s")


def _loop_json(loop) -> dict:
    if isinstance(loop, NotDerivable):
        return {"derived": False, "reason": loop.reason}
    return {"derived": True, "direction": loop.direction,
            "body": [body.lines() for body in loop.bodies]}


def strip_table(problem: Problem, inv: Invariant, names: dict[str, str]) -> Table:
    table = Table(title="strips", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("region")
    for i, op in enumerate(problem.operations):
        table.add_column(f"{i}: {op.name}")
    table.add_column("C_R", justify="right")
    table.add_column("U_R", justify="right")
    for s in strips(problem, inv):
        table.add_row(names.get(s.region, s.region), *(CELL.get(c, "·") for c in s.cells), str(s.C), str(s.U))
    return table


def print_report(console: Console, problem: Problem, invariants: list[Invariant], complete: bool = True) -> None:
    full = with_const_tasks(problem)
    names = display_names(problem)
    console.print(f"[bold]{problem.name}[/]: {len(problem.operations)} operation(s), "
                  f"[bold]{len(invariants)}[/] fused loop invariant(s)")
    if problem.description:
        console.print(problem.description.strip(), style="dim")
    for op in problem.operations:
        if op.note:
            console.print(f"note: {op.name}: {op.note}", style="yellow")
    for n, inv in enumerate(invariants, 1):
        console.rule(f"invariant {n}")
        for i, (op, ks) in enumerate(zip(full.operations, inv.past)):
            console.print(f"operation {i} ({op.name}), past:")
            for k in ks:
                if op.tasks[k].kind != "const":
                    console.print("    " + show_readable(op.tasks[k], names), markup=False)
        console.print(strip_table(full, inv, names))
        loop = derive_solution(problem, inv)
        if isinstance(loop, NotDerivable):
            console.print(f"loop body: not derived: {loop.reason}", style="yellow", markup=False)
        else:
            console.print(f"loop body, traversing {loop.direction} (FLAME notation):")
            for body in loop.bodies:
                console.print(f"  {body.operation}:", markup=False)
                for line in body.lines():
                    console.print("    " + line, markup=False)
    if not invariants and not complete:
        console.print("[bold red]no fused invariant found[/] within the time limit (--time-limit)")
    elif not invariants:
        why = explain(problem)
        console.print(f"[bold red]no fused invariant[/]: {why.summary}")
        console.print("the conflicting constraints (a minimal set, found by the solver):")
        for r in why.reasons:
            console.print("  - " + r, markup=False)


def write_svgs(problem: Problem, invariants: list[Invariant], out_dir: Path) -> list[Path]:
    """One SVG per fused solution, or one conflict picture when there is none."""
    full = with_const_tasks(problem)
    names = display_names(problem)
    from flamefuse.codegen import output_path
    if not invariants:
        why = explain(problem)
        svg = conflict_svg(full, why.operations, why.regions, f"{problem.name}: no fused invariant", names)
        return [_write(output_path(out_dir, problem.name, "-conflict.svg", problem.source), svg)]
    return [_write(output_path(out_dir, problem.name, f"-{n}.svg", problem.source),
                   strips_svg(full, inv, f"{problem.name}: invariant {n}", names))
            for n, inv in enumerate(invariants, 1)]


def _write(path: Path, text: str) -> Path:
    """``write_text_atomic`` with an OSError (a read-only or missing folder, a full disk) as a
    clear error."""
    try:
        return write_text_atomic(path, text)
    except OSError as err:
        fail(f"cannot write {path}: {err.strerror or err}", hint="choose a file or folder you can write")


def write_latex(problem: Problem, invariants: list[Invariant], path: Path) -> Path:
    solutions = []
    for inv in invariants:
        loop = derive_solution(problem, inv)
        if isinstance(loop, NotDerivable):
            solutions.append(Solution(inv, None, loop.reason))
        else:
            bodies = tuple(tuple(body.lines()) for body in loop.bodies)
            solutions.append(Solution(inv, bodies, direction=loop.direction))
    return _write(path, latex_document(with_const_tasks(problem), solutions, display_names(problem)))


def _progress(text: str) -> None:
    print(f"flamefuse: {text}", file=sys.stderr, flush=True)


def run(args) -> int:
    from flamefuse.search.bounded import search
    if args.limit < 0 or args.time_limit < 0:
        fail("--limit and --time-limit take a number >= 0 (0: no limit)")
    problem = load(args.file)
    found = search(problem, args.engine, limit=args.limit, time_limit=args.time_limit, progress=_progress)
    invariants = found.invariants
    if found.note():
        _progress(found.note())
    if args.emit:
        from flamefuse.codegen import write_module
        print(f"wrote {write_module(problem, invariants, Path(args.emit))}", file=sys.stderr)
    if args.latex:
        print(f"wrote {write_latex(problem, invariants, Path(args.latex))}", file=sys.stderr)
    if args.svg:
        for path in write_svgs(problem, invariants, Path(args.svg)):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        out = to_json(problem, invariants, found.complete, _progress)
        out.update(more=found.more, complete=found.complete)
        print(json.dumps(out, indent=None if args.compact else 2))
    else:
        print_report(Console(highlight=False), problem, invariants, found.complete)
    return 0


def register(sub) -> None:
    p = sub.add_parser("derive", help="list the fused loop invariants of a spec (YAML or reference syntax)")
    p.add_argument("file", help="a YAML spec (specs/*.yaml) or a reference-syntax task list")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of tables")
    p.add_argument("--compact", action="store_true", help="with --json: one line")
    p.add_argument("--engine", choices=sorted(ENGINES), default="cpsat",
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
