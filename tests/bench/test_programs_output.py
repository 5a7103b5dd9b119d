"""benchmarks/programs.py keeps its results when its reader stops early (``| head``)."""
import json
import sys

from flamefuse.cli.bench import BENCH_DIR
from flamefuse.files import import_file


class ClosedPipe:
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass


def test_results_are_written_though_the_reader_has_gone(tmp_path, monkeypatch):
    programs = import_file(BENCH_DIR / "programs.py", "flamefuse_bench_programs_test")
    measured = []

    def measure(name, args, rtol, repeat, tmp):
        measured.append(name)
        return {"program": name, "args": " ".join(args), "numpy_process_s": 2.0, "fuse_process_s": 1.0,
                "numpy_part_s": 1.5, "fuse_part_s": 0.5, "cold_s": 3.0, "match": True,
                "kernels_compiled": 0, "fallbacks": 0}
    monkeypatch.setattr(programs, "measure", measure)
    monkeypatch.setattr(programs, "PROGRAMS", {"a": (["1"], 0), "b": (["2"], 0)})
    monkeypatch.setattr(programs, "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "benchmarks").mkdir()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert programs.main(["--repeat", "1"]) == 0
    assert measured == ["a", "b"]                   # measuring went on after the first line failed
    rows = json.loads((tmp_path / "benchmarks" / "results" / "programs.json").read_text())
    assert [r["program"] for r in rows] == ["a", "b"]
    assert "| a | 1 |" in (tmp_path / "docs" / "programs-performance.md").read_text()
