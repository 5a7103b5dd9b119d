"""benchmarks/corpus_compare.py: the side-by-side table of two checkouts (best of the rounds,
NumPy / flamefuse ratios, geometric means, the programs below 0.9x), on made-up samples."""
import math
import sys

from flamefuse.cli.bench import BENCH_DIR
from flamefuse.files import import_file

sys.path.insert(0, str(BENCH_DIR))
compare = import_file(BENCH_DIR / "corpus_compare.py", "flamefuse_bench_corpus_compare")


def _row(name, numpy_s, a_s, b_s, status="bitwise"):
    # samples: (process s, kernel s) per round; the best (minimum) of each counts
    return {"program": name, "load": 2.0, "status": {"a": status, "b": "bitwise"},
            "samples": {"numpy": [(numpy_s + 0.5, numpy_s), (numpy_s + 0.1, numpy_s * 3)],
                        "a": [(a_s + 0.1, a_s)], "b": [(b_s + 0.1, b_s), (9.0, 9.0)]}}


def test_the_table_gives_best_of_rounds_ratios_and_geometric_means():
    rows = [_row("p1", 1.0, 2.0, 0.5), _row("p2", 1.0, 0.5, 0.5), _row("p3", 1.0, 1.0, 1.0, "MISMATCH")]
    text = compare.report(rows, ["a", "b"])
    p1 = next(line for line in text.splitlines() if line.startswith("| p1 "))
    assert "| 0.50 | 2.00 |" in p1                         # kernel x: 1.0 / 2.0 and 1.0 / 0.5
    geo = next(line for line in text.splitlines() if line.startswith("| geometric mean"))
    assert f"| {math.sqrt(0.5 * 2.0):.2f} | {4 ** (1 / 3):.2f} |" in geo     # a: p1, p2 (p3 mismatched); b: all
    assert "a: 1 below 0.9x (kernel or process): p1" in text
    assert "b: 0 below 0.9x" in text


def test_an_environment_per_checkout(monkeypatch, tmp_path):
    envs = compare.parse_envs(["on:FLAMEFUSE_NUMPY_SIMD=1", "on:X=a=b"], {"off": "/a", "on": "/a"})
    assert envs == {"on": {"FLAMEFUSE_NUMPY_SIMD": "1", "X": "a=b"}}
    for bad in ("nolabel:X=1", "on:X", "on:=1"):
        try:
            compare.parse_envs([bad], {"on": "/a"})
        except ValueError as e:
            assert bad in str(e)
        else:
            raise AssertionError(bad)
    seen = []
    monkeypatch.setattr(compare, "_run", lambda cmd, env, cwd, timeout: seen.append(
        (cmd[-1], env.get("FLAMEFUSE_NUMPY_SIMD"), env.get("X"))) or {"status": "ok", "wall": 1.0, "part": 1.0})
    monkeypatch.setattr(compare.corpus, "wait_for_compiles", lambda env, cwd: None)
    monkeypatch.setattr(compare.corpus, "compare", lambda a, b, rtol: ("bitwise", 0.0))
    monkeypatch.delenv("FLAMEFUSE_NUMPY_SIMD", raising=False)
    name = next(iter(compare.corpus.PROGRAMS))
    compare.measure(name, {"off": "/a", "on": "/a"}, 1, 1.0, tmp_path, envs=envs)
    by_label = {out.split(".")[-2]: (simd, x) for out, simd, x in seen}
    assert by_label == {"off": (None, None), "on": ("1", "a=b"), "numpy": (None, None)}
