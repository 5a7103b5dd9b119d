"""An attempt of the derivation depends on the options only through those its rules read.

``derive_operation`` tries the rule options (``loop.OPTIONS``) in order and skips a choice
that agrees, on every option a failed attempt read (``Evaluator.option`` notes them), with
that attempt: it would fail the same way.  That is sound only if the notes are complete.
Here every attempt of every shipped spec's invariants (each operation, each direction it
allows, with and without the algebra) is made with all eight choices, and any two choices
that agree on what the first one read must give the same update or the same failure.
The skipping itself is checked where it matters: the derived loops of every shipped spec are
those of trying every choice (the committed ``generated/`` modules and
tests/core/test_reference.py compare them).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from flamefuse.derive.blocks import render
from flamefuse.derive.evaluate import Unsupported
from flamefuse.derive.loop import OPTIONS, _update, directions, stale_regions
from flamefuse.pme.model import with_const_tasks
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))


def _outcome(full, op, real, d, opts, algebra, stale):
    read: set = set()
    try:
        result = ("update", tuple(render(t) for t in _update(full, op, real, d, opts, algebra, stale, read)))
    except Unsupported as why:
        result = ("fails", str(why))
    return result, read


@pytest.mark.parametrize("spec", SPECS)
def test_choices_that_agree_on_the_options_read_give_the_same_result(spec):
    problem = load(ROOT / "specs" / f"{spec}.yaml")
    full = with_const_tasks(problem)
    if any(op.note or not op.exact for op in full.operations):
        pytest.skip("not derivable: no exact PME")
    invariants = enumerate_cpsat(problem)
    if not invariants:
        pytest.skip("no fused invariant")
    checked = 0
    for inv in invariants:
        for i, (op, past) in enumerate(zip(full.operations, inv.past)):
            real = tuple(k for k in past if op.tasks[k].kind != "const")
            try:
                ways = directions(full, op, real)
            except Unsupported:
                continue
            stale = stale_regions(full, inv.past, i)
            for d in ways:
                for algebra in (False, True):
                    outcomes = {opts: _outcome(full, op, real, d, opts, algebra, stale) for opts in OPTIONS}
                    for opts, (result, read) in outcomes.items():
                        for other, (again, _) in outcomes.items():
                            if all(getattr(other, n) == getattr(opts, n) for n in read):
                                assert again == result, (spec, inv.past, op.name, d, algebra, opts, other, read)
                                checked += 1
    assert checked > 0
