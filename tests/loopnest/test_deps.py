"""Exact dependence analysis: directions, distances, strided independence."""
from flamefuse.loopnest import Builder, Dim, dependences
from flamefuse.loopnest.deps import violated

i, j = Dim("i"), Dim("j")


def _prog(body):
    b = Builder()
    arrays = {n: b.array(n, ("n", "n")) for n in ("A", "B", "C", "X")}
    vec = {n: b.array(n, ("n",)) for n in ("x", "y")}
    body(b, {**arrays, **vec})
    return b.program()


def test_self_dependence_distance_one_minus_one():
    p = _prog(lambda b, a: b.assign(a["X"][i, j], a["X"][i - 1, j + 1] + 1.0,
                                    extents={"i": "n", "j": "n-1"}))
    flow = [d for d in dependences(p) if d.kind == "flow"]
    assert len(flow) == 1
    assert flow[0].directions == frozenset({("+", "-")})
    assert flow[0].distance == (1, -1)
    anti = [d for d in dependences(p) if d.kind == "anti"]
    assert anti == []          # X[i-1][j+1] is read before it could be overwritten later


def test_reduction_self_dependence_directions():
    p = _prog(lambda b, a: b.accumulate(a["x"][i], a["A"][i, j] * a["y"][j]))
    out = [d for d in dependences(p) if d.kind == "output"]
    assert out[0].directions == frozenset({("0", "+")})
    assert out[0].distance == (0, None)    # any positive j distance


def test_strided_accesses_are_independent():
    def body(b, a):
        b.assign(a["x"][2 * i], a["y"][i], extents={"i": "n-5"})
        b.assign(a["y"][i], a["x"][2 * i + 1], extents={"i": "n-5"})
    p = _prog(body)
    assert [d for d in dependences(p) if d.array == "x"] == []
    # y: S0 reads y[i], S1 writes y[i]: an anti dependence only
    assert [(d.kind, d.source, d.target) for d in dependences(p) if d.array == "y"] == [("anti", 0, 1)]


def test_transposed_read_distances():
    def body(b, a):
        b.assign(a["B"][i, j], a["A"][i, j] * 2.0)
        b.assign(a["C"][i, j], a["B"][j, i])
    p = _prog(body)
    (dep,) = dependences(p)
    assert (dep.kind, dep.source, dep.target, dep.array) == ("flow", 0, 1, "B")
    assert violated(p, dep, (), 0, 0)            # identity fusion: C row i needs B column i
    assert not violated(p, dep, (), 0, 1)        # S0.i with S1.j: distance 0
    assert not violated(p, dep, ((0, 1),), 1, 0)  # then S0.j with S1.i: distance 0
