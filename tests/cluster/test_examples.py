"""The paper's examples: exact clusterings, objectives, baselines, CLI output."""
import json

import numpy as np
import pytest

from flamefuse.cli import main
from flamefuse.cluster import METHODS, cluster, compile_program, evaluate, parse_file, parse_text, to_dot

EXPECTED = {
    "normalize2": ([["sum1", "gts", "sum2"], ["ys1", "ys2"]], 51),
    "normalizeInc": ([["sum1"], ["incs", "ys"]], 9),
    "mapFoldMap": ([["ys", "s"], ["zs"]], 3),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("solver", ["cpsat", "milp"])
def test_optimal_clusterings(data, name, solver):
    result = cluster(parse_file(data / f"{name}.comb"), solver=solver)
    assert (result.named(), result.objective) == EXPECTED[name]


def test_normalize2_baselines(data):
    p = parse_file(data / "normalize2.comb")
    assert cluster(p, "megiddo").named() == [["sum1", "gts"], ["sum2"], ["ys1", "ys2"]]
    assert cluster(p, "stream").named() == [["sum1"], ["gts", "sum2"], ["ys1"], ["ys2"]]
    assert cluster(p, "stream").objective == 102          # the paper's value
    assert len(cluster(p, "unfused").clusters) == 5


def test_normalize2_contracts_only_the_filter_output(data):
    assert cluster(parse_file(data / "normalize2.comb")).contracted() == ["gts"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("method", METHODS)
def test_numba_execution_matches_numpy(data, name, method):
    p = parse_file(data / f"{name}.comb")
    xs = np.random.default_rng(1).standard_normal(257)
    want = evaluate(p, {"xs": xs})
    for parallel in (False, True):
        got = compile_program(cluster(p, method), parallel=parallel).run({"xs": xs})
        for r in p.returns:
            np.testing.assert_allclose(got[r], want[r], rtol=1e-12, atol=1e-12 if parallel else 0)


def test_parallel_loops_only_where_order_does_not_matter(data):
    # normalize2's first cluster only folds and counts: a prange; a filter whose output is
    # stored (its running count addresses the array) keeps its loop sequential
    fused = compile_program(cluster(parse_file(data / "normalize2.comb")), parallel=True)
    assert ["prange(L)" in s for s in fused.sources] == [True, True]
    stored = compile_program(cluster(parse_text("param array xs\nys = filter {} xs\nreturn ys")),
                             parallel=True)
    assert "prange" not in stored.sources[0].split("def cluster_fn")[1]


def test_normalize2_values_by_hand(data):
    p = parse_file(data / "normalize2.comb")
    xs = np.array([1.0, -2.0, 3.0])
    got = compile_program(cluster(p)).run({"xs": xs})
    np.testing.assert_array_equal(got["ys1"], xs + 2.0)     # default map: xs + sum1
    np.testing.assert_array_equal(got["ys2"], xs + 4.0)     # sum2 = 1 + 3


def test_cli_json(data, capsys):
    assert main(["cluster", str(data / "normalize2.comb"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["clusters"] == EXPECTED["normalize2"][0] and out["objective"] == 51
    assert main(["cluster", str(data / "normalize2.comb"), "--json",
                 "--baseline", "megiddo"]) == 0
    assert len(json.loads(capsys.readouterr().out)["clusters"]) == 3


def test_cli_text_and_dot(data, capsys, tmp_path):
    dot = tmp_path / "n.dot"
    assert main(["cluster", str(data / "normalizeInc.comb"), "--dot", str(dot)]) == 0
    out = capsys.readouterr().out
    assert "1. loop: {sum1}" in out and "2. loop: {incs, ys}" in out
    text = dot.read_text()
    assert text.count("subgraph cluster_") == 2 and '"sum1" -> "ys"' in text


def test_cli_reports_errors(tmp_path, capsys):
    bad = tmp_path / "bad.comb"
    bad.write_text("param array xs\nys = mop {} xs\n")
    assert main(["cluster", str(bad)]) == 2
    assert f"{bad}:2:6: error: unknown combinator 'mop'" in capsys.readouterr().err


def test_dot_marks_fusion_preventing_edges(data):
    text = to_dot(cluster(parse_file(data / "normalize2.comb")))
    assert '"sum1" -> "ys1" [label="sum1", style=dashed, color=red, arrowhead=onormal' in text
