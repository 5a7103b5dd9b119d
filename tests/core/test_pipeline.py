"""The synthesis pipeline (#31 item 2): one Synthesis per problem, read by every consumer."""
import json
from pathlib import Path

import pytest

import flamefuse.derive.loop
from flamefuse.cli import main
from flamefuse.derive import DerivedLoop, NotDerivable, derive_solution
from flamefuse.pipeline import synthesize
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


def test_a_synthesis_holds_the_invariants_their_loops_and_their_kernels():
    problem = load(SPECS / "lu.yaml")
    s = synthesize(problem)
    assert s.invariants == tuple(enumerate_cpsat(problem)) and s.complete and s.more == 0 and s.note is None
    assert s.loops == tuple(derive_solution(problem, inv) for inv in s.invariants)
    names = [f"lu_v{k}" for k in range(1, len(s.invariants) + 1)]
    assert sorted([m[0] for m in s.made] + list(s.skipped)) == sorted(names)
    assert "lu_v1" in s.skipped and "partial pivoting" in s.skipped["lu_v1"]
    for (name, past, ir), loop in ((m, s.loops[names.index(m[0])]) for m in s.made):
        assert isinstance(loop, DerivedLoop) and ir.name == name
        assert past == sum(len(p) for p in s.invariants[names.index(name)].past)
    assert s.lowered is s.lowered and s.why is None                 # computed once


def test_no_invariant_is_explained():
    s = synthesize(load(SPECS / "chol_backsolve.yaml"))
    assert s.invariants == () and s.made == [] and "cannot share one loop" in s.why.summary


def test_kept_invariants_are_not_searched_again(monkeypatch):
    problem = load(SPECS / "cholesky.yaml")
    invariants = enumerate_cpsat(problem)
    import flamefuse.search.bounded

    def no_search(*args, **kwargs):
        raise AssertionError("searched again")
    monkeypatch.setattr(flamefuse.search.bounded, "search", no_search)
    s = synthesize(problem, invariants=invariants)
    assert s.invariants == tuple(invariants) and all(isinstance(x, DerivedLoop) for x in s.loops)


def _count_derivations(monkeypatch) -> list:
    """Every derivation of one operation's body, wherever it is asked for, is counted."""
    calls, real = [], flamefuse.derive.loop.derive_operation

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(flamefuse.derive.loop, "derive_operation", counted)
    return calls


@pytest.mark.parametrize("spec", ["trinv", "lu"])
def test_derive_derives_once_for_every_output(spec, monkeypatch, tmp_path, capsys):
    """The report, JSON, LaTeX and --emit of one derive run read one synthesis: each loop is
    derived once (--emit derived every loop again)."""
    calls = _count_derivations(monkeypatch)
    assert main(["derive", str(SPECS / f"{spec}.yaml"), "--json"]) == 0
    alone = len(calls)
    first = json.loads(capsys.readouterr().out)
    calls.clear()
    assert main(["derive", str(SPECS / f"{spec}.yaml"), "--json", "--emit", str(tmp_path),
                 "--latex", str(tmp_path / "x.tex")]) == 0
    assert alone > 0 and len(calls) == alone
    assert json.loads(capsys.readouterr().out) == first
    assert (tmp_path / f"{spec}.py").read_text() == (ROOT / "generated" / f"{spec}.py").read_text()


def test_a_not_derivable_invariant_keeps_its_reason():
    s = synthesize(load(SPECS / "lu.yaml"))
    for k, loop in enumerate(s.loops, 1):
        if isinstance(loop, NotDerivable):
            assert s.skipped[f"lu_v{k}"] == loop.reason
