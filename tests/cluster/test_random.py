"""Random programs: every clustering is legal and runs to the naive NumPy result."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flamefuse.cluster import (METHODS, Builder, build, cluster, compile_program, evaluate,
                               parse_text, violations)
from flamefuse.cluster.clusters import cost
from flamefuse.cluster.randprog import random_program


def inputs(seed, n=23):
    rng = np.random.default_rng(seed)
    return {"xs": rng.standard_normal(n), "ys": rng.standard_normal(n), "n": 5.0}


def check_same(program, result, values, jit, parallel=False):
    got = compile_program(result, jit=jit, parallel=parallel).run(values)
    want = evaluate(program, values)
    for r in program.returns:
        # parallel folds reassociate their sums: allow rounding relative to the magnitudes
        scale = 1e-10 * max(1.0, float(np.max(np.abs(want[r]), initial=0.0)))
        np.testing.assert_allclose(got[r], want[r], rtol=1e-12, atol=scale if parallel else 0, err_msg=r)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 18), seed=st.integers(0, 10**6))
def test_random_programs_cluster_legally_and_run(size, seed):
    program = random_program(size, seed)
    optimum = cluster(program)
    assert violations(optimum.graph, optimum.clusters) == []
    for method in METHODS:
        result = cluster(program, method)
        assert violations(result.graph, result.clusters) == []
        assert result.objective >= optimum.objective
        assert result.objective == cost(result.graph, result.clusters,
                                        method == "megiddo") or method != "ilp"
        check_same(program, result, inputs(seed), jit=False)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_cpsat_and_highs_agree(seed):
    program = random_program(14, seed)
    assert cluster(program).objective == cluster(program, solver="milp").objective


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("seed", [3, 11, 12])
def test_random_programs_under_numba(seed, parallel):
    program = random_program(12, seed)
    check_same(program, cluster(program), inputs(seed, 101), jit=True, parallel=parallel)


def test_every_combinator_and_worker_under_numba():
    text = """
    param array xs ys
    param scalar n
    s   = fold {} xs : max(xs, 0) * 2
    pos = filter {} xs : xs > 0 and not (xs > 1.5)
    big = filter {s} pos : pos * 3 > s / 4
    cnt = fold {} big : 1
    m   = map {s} pos : pos if pos < 0.5 else -pos + min(pos, s, 2)
    g   = generate {s} n : i * i - s
    gg  = gather {} ys g
    c   = cross {} xs g : xs * g
    cs  = fold {} c : abs(c)
    {t} e = external {cnt} big
    me  = map {t} e
    return s cnt m gg cs me big
    """
    program = parse_text(text)
    values = {"xs": np.random.default_rng(5).standard_normal(300),
              "ys": np.arange(7.0), "n": 9}
    result = cluster(program)
    assert result.named() == [["s"], ["pos", "big", "cnt", "m"], ["g", "gg"], ["c", "cs"],
                              ["t", "e"], ["me"]]           # nested filters fuse with their uses
    check_same(program, result, values, jit=True)
    for method in ("unfused", "stream"):
        check_same(program, cluster(program, method), values, jit=True)


def test_builder_matches_text(data):
    b = Builder(arrays=["xs"])
    b.fold("sum1", "xs").filter("gts", "xs").fold("sum2", "gts")
    b.map("ys1", "xs", scalars=["sum1"]).map("ys2", "xs", scalars=["sum2"])
    program = b.returns("ys1", "ys2").build()
    assert cluster(program).named() == [["sum1", "gts", "sum2"], ["ys1", "ys2"]]
    assert build(program).edges == build(
        parse_text((data / "normalize2.comb").read_text())).edges


def test_empty_filter_output_runs():
    program = parse_text("param array xs\nf = filter {} xs : xs > 100\ns = fold {} f\n"
                         "m = map {s} xs\nreturn f s m\n")
    got = compile_program(cluster(program)).run({"xs": np.arange(4.0)})
    assert got["f"].size == 0 and got["s"] == 0.0
    np.testing.assert_array_equal(got["m"], np.arange(4.0))
