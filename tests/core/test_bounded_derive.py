"""``flamefuse derive`` on hostile or huge input ends with a clear message (issue 28 item 4):
devices and huge files are refused without being read, deep nesting is an error, not a
RecursionError, operands no operation uses are accepted, and a search keeps at most --limit
invariants, says how many more exist, and stops at --time-limit."""
import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from flamefuse.cli import main

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from derive import chain_spec  # noqa: E402


def _small_memory():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def derive_process(*args):
    return subprocess.run([sys.executable, "-m", "flamefuse.cli", "derive", *map(str, args)],
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=300, preexec_fn=_small_memory)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_without_reading_it():
    done = derive_process("/dev/zero")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_a_huge_file_is_refused(tmp_path, capsys):
    path = tmp_path / "huge.yaml"
    path.write_bytes(b"name: x\n" + b"#" * (2 << 20))
    assert main(["derive", str(path)]) == 2
    assert "larger than" in capsys.readouterr().err


@pytest.mark.parametrize("text", [
    "name: x\noperations: " + "[" * 500 + "]" * 500 + "\n",
    "name: x\noperands:\n  A: {kind: matrix, structure: lower}\noperations:\n  - name: f\n    tasks:\n"
    "      - op A_TL~ = " + "(" * 500 + "A_TL" + ")" * 500 + "\n",
    "name: x\noperands:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(500)),
])
def test_deep_nesting_is_a_clear_error(tmp_path, capsys, text):
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    assert main(["derive", str(path)]) == 2
    assert "nested" in capsys.readouterr().err


def test_deep_nesting_in_reference_syntax(tmp_path, capsys):
    path = tmp_path / "deep.txt"
    path.write_text("[[op_eq(tilde(ltl)," + "chol(" * 500 + "hat(ltl)" + ")" * 500 + ")]].\n")
    assert main(["derive", str(path)]) == 2
    assert ":1:329: error: brackets nested more than 64 deep" in capsys.readouterr().err


def test_operands_no_operation_uses_are_accepted(tmp_path, capsys):
    """chain_spec(2) declares L2, y1 and y2 and never uses them (IndexError in derive/loop.py)."""
    path = tmp_path / "chain2.yaml"
    path.write_text(chain_spec(2))
    assert main(["derive", str(path), "--json", "--emit", str(tmp_path / "out")]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["count"] >= 1 and any(loop["derived"] for loop in got["loops"])
    from flamefuse.codegen import load_generated
    mod = load_generated(tmp_path / "out" / "chain2.py")
    n, rng = 9, numpy.random.default_rng(3)
    l0 = numpy.asfortranarray(numpy.tril(rng.standard_normal((n, n))) + n * numpy.eye(n))
    want = numpy.linalg.inv(l0)
    x = rng.standard_normal(n)
    l1, l2 = numpy.zeros((n, n), order="F"), numpy.zeros((n, n), order="F")
    y0, y1, y2 = numpy.zeros(n), numpy.zeros(n), numpy.zeros(n)
    mod.DEFAULT(l0, l1, l2, x, y0, y1, y2, block_size=4)
    numpy.testing.assert_allclose(numpy.tril(l1), want, rtol=1e-10, atol=1e-12)
    numpy.testing.assert_allclose(y0, numpy.tril(l1) @ x, rtol=1e-10, atol=1e-12)


def test_the_limit_keeps_a_few_and_says_how_many_more_exist(tmp_path, capsys):
    path = tmp_path / "chain10.yaml"
    path.write_text(chain_spec(10))
    assert main(["derive", str(path), "--json", "--limit", "3", "--time-limit", "0"]) == 0
    out, err = capsys.readouterr()
    got = json.loads(out)
    assert got["count"] == 3 == len(got["loops"]) and got["complete"] is True
    assert got["more"] == 2 ** 5 - 3
    assert "showing 3 of 32 fused invariants: 29 more exist" in err
    assert main(["derive", str(path), "--json", "--limit", "0", "--time-limit", "0"]) == 0
    everything = json.loads(capsys.readouterr().out)
    assert everything["count"] == 32 and everything["more"] == 0
    assert all(inv in everything["invariants"] for inv in got["invariants"])


@pytest.mark.parametrize("engine", ["csp", "brute", "cpsat"])
def test_a_time_limit_ends_a_long_search(engine):
    from flamefuse.search.bounded import search
    from flamefuse.spec import load_spec_text
    problem = load_spec_text(chain_spec(30), "<chain30>")
    found = search(problem, engine, limit=1, time_limit=0.5)
    assert not found.complete and "more may exist" in found.note()
    assert len(found.invariants) <= 1


def test_unlimited_search_matches_the_engine():
    from flamefuse.search.bounded import search
    from flamefuse.search.enumerate import enumerate_cpsat
    from flamefuse.spec import load
    problem = load(ROOT / "specs" / "sylvester.yaml")
    found = search(problem, "cpsat", limit=0, time_limit=0)
    assert found.complete and found.more == 0 and found.note() is None
    assert found.invariants == enumerate_cpsat(problem)
    for engine in ("csp", "brute"):
        small = load(ROOT / "specs" / "trinv_trmv.yaml")     # with const tasks (a pure input)
        assert search(small, engine, limit=0, time_limit=0).invariants == enumerate_cpsat(small)


def test_a_csp_search_in_its_child_process_finds_what_the_engine_finds():
    """With a time limit the csp engine runs in a child process (flamefuse.search.child):
    the same invariants as CP-SAT's when it has time to finish; a deadline already past ends
    it at once, the child killed."""
    from flamefuse.search.bounded import search
    from flamefuse.search.child import iterate_in_child
    from flamefuse.search.enumerate import enumerate_cpsat
    from flamefuse.spec import load
    small = load(ROOT / "specs" / "trinv_trmv.yaml")
    found = search(small, "csp", limit=0, time_limit=120)
    assert found.complete and found.invariants == enumerate_cpsat(small)
    with pytest.raises(TimeoutError):
        next(iterate_in_child("csp", small, 0.0))
