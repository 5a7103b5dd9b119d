"""The invariant sets of the reference examples, exactly, from both engines and the CLI."""
import json
from pathlib import Path

import pytest

from flamefuse.cli import main
from flamefuse.pme import parse_problem, show, validate, with_const_tasks
from flamefuse.search.brute import enumerate_brute
from flamefuse.search.csp import enumerate_csp
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.search.solutions import COMPUTED, PARTIAL, UNCOMPUTED, strips
from flamefuse.spec import load

DATA = Path(__file__).parent / "data"
SPECS = Path(__file__).resolve().parents[2] / "specs"
EXAMPLES = sorted(p.stem for p in DATA.glob("*.txt"))


def expected(name):
    return json.loads((DATA / f"{name}.expected.json").read_text())


def as_set(invariants):
    return sorted(json.dumps(inv) for inv in invariants)


@pytest.mark.parametrize("name", EXAMPLES)
def test_cli_json_matches_reference(name, capsys):
    assert main(["derive", str(DATA / f"{name}.txt"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = expected(name)
    assert got["count"] == want["count"] == len(got["invariants"])
    assert as_set(got["invariants"]) == as_set(want["invariants"])


@pytest.mark.parametrize("name", EXAMPLES)
def test_csp_engine_matches_reference(name, capsys):
    assert main(["derive", str(DATA / f"{name}.txt"), "--json", "--engine", "csp"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert as_set(got["invariants"]) == as_set(expected(name)["invariants"])


@pytest.mark.parametrize("name", EXAMPLES)
def test_brute_force_engine_matches_reference(name):
    problem = load(DATA / f"{name}.txt")
    got = [inv.states(with_const_tasks(problem)) for inv in enumerate_brute(problem)]
    assert as_set(got) == as_set(expected(name)["invariants"])


def test_own_region_examples_are_the_corrected_rule():
    """Rule 6 counts inputs on a task's own region: 0 and 2 invariants, not 2 and 4."""
    assert [expected(n)["count"] for n in ("own_region", "own_region_2")] == [0, 2]


@pytest.mark.parametrize("name", [n for n in EXAMPLES if (SPECS / f"{n}.yaml").exists()])
def test_yaml_spec_gives_reference_count(name):
    problem = load(SPECS / f"{name}.yaml")
    assert len(enumerate_cpsat(problem)) == expected(name)["count"]
    assert enumerate_cpsat(problem) == enumerate_csp(problem)


@pytest.mark.parametrize("name", sorted(p.stem for p in SPECS.glob("*.yaml")))
def test_every_shipped_spec_three_engines_agree(name):
    problem = load(SPECS / f"{name}.yaml")
    want = enumerate_brute(problem)
    assert enumerate_cpsat(problem) == want
    if name != "sylvester":          # python-constraint is slow on its many regions
        assert enumerate_csp(problem) == want


def test_order_is_deterministic_and_readable():
    problem = load(DATA / "cholesky.txt")
    full = with_const_tasks(problem)
    assert [inv.states(full) for inv in enumerate_cpsat(problem)] == [
        [["tilde(ltl)"]], [["tilde(ltl)", "tilde(lbl)"]], [["tilde(ltl)", "tilde(lbl)", "during(lbr,0)"]]]


@pytest.mark.parametrize("name", EXAMPLES)
def test_printer_round_trips(name):
    problem = validate(parse_problem((DATA / f"{name}.txt").read_text()))
    again = parse_problem(show(problem))
    assert again.operations == problem.operations


def test_spd_inverse_strips():
    problem = with_const_tasks(load(SPECS / "spd_inverse.yaml"))
    [inv] = enumerate_cpsat(problem)
    got = {s.region: (s.cells, s.C, s.U) for s in strips(problem, inv)}
    assert got == {
        "a_tl": ((COMPUTED, COMPUTED, PARTIAL), 1, 3),
        "a_bl": ((COMPUTED, PARTIAL, UNCOMPUTED), 0, 2),
        "a_br": ((PARTIAL, UNCOMPUTED, UNCOMPUTED), -1, 1),
    }


def test_no_fused_invariant_is_explained(capsys):
    assert main(["derive", str(SPECS / "chol_backsolve.yaml"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["count"] == 0 and got["invariants"] == []
    why = got["explanation"]
    assert why["operations"] == [0, 1]
    assert "a_br" in why["regions"]
    assert "a_tl first" in why["summary"] and "b_b first" in why["summary"]
    assert main(["derive", str(SPECS / "chol_backsolve.yaml")]) == 0
    text = capsys.readouterr().out
    assert "no fused invariant" in text and "trsm_lt" in text


def test_quoted_upper_case_names_are_atoms(tmp_path, capsys):
    path = tmp_path / "quoted.txt"
    path.write_text("[[op_eq(tilde(b), f(hat(b), 'X')), eq(during(b, 0), g(hat(b)))]].")
    assert main(["derive", str(path), "--json", "--engine", "brute"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 0
