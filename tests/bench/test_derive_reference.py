"""benchmarks/derive.py --reference: the reference tool side by side, or the reason it was not run."""
import io
import os
import stat
import sys

from rich.console import Console

from flamefuse.cli.bench import BENCH_DIR
from flamefuse.files import import_file

sys.path.insert(0, str(BENCH_DIR))
derive = import_file(BENCH_DIR / "derive.py", "flamefuse_bench_derive")


def _console():
    out = io.StringIO()
    return Console(file=out, width=200), out


def test_without_swipl_it_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    console, out = _console()
    assert derive.reference_rows(console, str(tmp_path)) is None
    assert "swipl not found" in out.getvalue()
    console, out = _console()
    assert derive.reference_rows(console, None) is None
    assert "no --reference DIR" in out.getvalue()


def test_with_a_reference_each_term_problem_is_timed_side_by_side(monkeypatch, tmp_path):
    bin_dir, ref = tmp_path / "bin", tmp_path / "pme-fusion"
    bin_dir.mkdir()
    ref.mkdir()
    (ref / "gen_invariants.pl").write_text("% stand-in\n")
    log = tmp_path / "calls"
    swipl = bin_dir / "swipl"
    swipl.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n")
    swipl.chmod(swipl.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(derive, "command_time", lambda path: (0.2, 0.1, 0.2, 0.1))
    console, out = _console()
    rows = derive.reference_rows(console, str(ref))
    problems = sorted(p.stem for p in (derive.ROOT / "tests" / "core" / "data").glob("*.txt"))
    assert [r[0] for r in rows] == problems and problems
    calls = log.read_text().splitlines()
    assert len(calls) == 3 * len(problems)
    assert all(c.startswith(str(ref / "gen_invariants.pl")) for c in calls)
    assert "cold / ref" in out.getvalue()
