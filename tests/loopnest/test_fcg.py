"""Fusion conflict graph colouring: interchange, forbidden interchange, typed fusion, cuts."""
from flamefuse.loopnest import Builder, Dim, Leaf, analyse, schedule
from flamefuse.loopnest.fcg import conflict, self_edge
from flamefuse.loopnest.kernels import KERNELS

i, j = Dim("i"), Dim("j")


def _arrays(b):
    return {n: b.array(n, ("n", "n")) for n in ("A", "B", "C")}


def _shape(node):
    """A compact picture: nested tuples of (statement, dim) lists and leaf ints."""
    if isinstance(node, Leaf):
        return node.statement
    return (node.members, tuple(_shape(c) for c in node.body))


def test_transposed_consumer_fuses_with_interchange():
    b = Builder()
    a = _arrays(b)
    b.assign(a["B"][i, j], a["A"][i, j] * 2.0)
    b.assign(a["C"][i, j], a["B"][j, i])
    sched = schedule(analyse(b.program()))
    assert sched.permutations == ((0, 1), (1, 0))
    assert [_shape(r) for r in sched.roots] == [(((0, 0), (1, 1)), ((((0, 1), (1, 0)), (0, 1)),))]
    assert sched.cuts == ()


def test_distance_one_minus_one_forbids_interchange():
    b = Builder()
    a = _arrays(b)
    b.assign(a["B"][i, j], a["A"][i, j] * 2.0)
    b.assign(a["C"][i, j], a["B"][i - 1, j + 1], extents={"i": "n", "j": "n-1"})
    an = analyse(b.program())
    # S0.j with S1.j outermost would run the (1, -1) flow dependence backwards
    assert conflict(an, 0, 1, (), 1, 1, ()) is not None
    assert conflict(an, 0, 0, (), 1, 0, ()) is None
    # (the extents differ on j, so the fused i loop distributes its j loops)
    sched = schedule(an)
    assert sched.permutations == ((0, 1), (0, 1))
    assert len(sched.roots) == 1 and sched.roots[0].members == ((0, 0), (1, 0))


def test_self_dependence_blocks_needed_interchange():
    b = Builder()
    a = _arrays(b)
    b.assign(a["B"][i, j], a["A"][i, j] * 2.0)
    # C[i][j] = B[j][i] + C[i-1][j+1]: fusing needs S1 interchanged, which its
    # own (1, -1) dependence forbids, so the nests are distributed.
    b.assign(a["C"][i, j], a["B"][j, i] + a["C"][i - 1, j + 1], extents={"i": "n", "j": "n-1"})
    an = analyse(b.program())
    assert self_edge(an, 1, (), 1) is not None and self_edge(an, 1, (), 0) is None
    sched = schedule(an)
    assert len(sched.roots) == 2 and sched.permutations == ((0, 1), (0, 1))
    (cut,) = sched.cuts
    assert cut.statement == 1 and any("self-dependence" in r for r in cut.reasons)


def test_typed_fusion_of_unconnected_statements():
    b = Builder()
    x, y = b.array("x", ("n",)), b.array("y", ("m",))
    u, v, w = (b.array(n, (s,), role="out") for n, s in (("u", "n"), ("v", "m"), ("w", "n")))
    b.assign(u[i], x[i] * 2.0)       # extent n
    b.assign(v[i], y[i] + 1.0)       # extent m: not fusable with S0
    b.assign(w[i], x[i] - 1.0)       # extent n, independent of S1: joins S0
    sched = schedule(analyse(b.program()))
    assert [r.members for r in sched.roots] == [((0, 0), (2, 0)), ((1, 0),)]
    assert "extent" in sched.cuts[0].reasons[0]


def test_dependent_statement_waits_for_cut_predecessor():
    b = Builder()
    x, y = b.array("x", ("n",)), b.array("y", ("m",))
    u, v, w = (b.array(n, (s,), role="out") for n, s in (("u", "n"), ("v", "m"), ("w", "n")))
    b.assign(u[i], x[i] * 2.0)
    b.assign(v[i], y[i] + 1.0)
    b.assign(w[i], x[i] + v[0], extents={"i": "n"})   # needs v: may not run before S1
    sched = schedule(analyse(b.program()))
    assert [r.members for r in sched.roots] == [((0, 0),), ((1, 0),), ((2, 0),)]


def test_atax_cannot_fuse_fully_and_says_why():
    an = analyse(KERNELS["atax"][0](), reorder_float=True)
    sched = schedule(an)
    (root,) = sched.roots
    assert root.members == ((0, 0), (1, 1))            # one pass over A's rows
    assert [_shape(c) for c in root.body] == [(((0, 1),), (0,)), (((1, 0),), (1,))]
    (cut,) = sched.cuts
    assert cut.level == 1 and "flow dependence S0 -> S1 on tmp" in cut.reasons[0]


def test_bicg_and_gemver_schedules():
    sched = schedule(analyse(KERNELS["bicg"][0](), reorder_float=True))
    assert len(sched.roots) == 1 and sched.permutations == ((0, 1), (1, 0))
    g = schedule(analyse(KERNELS["gemver"][0](), reorder_float=True))
    assert [sorted(s for s, _ in r.members) for r in g.roots] == [[0, 1], [2], [3]]
    assert g.permutations[1] == (1, 0) and g.permutations[3] == (0, 1)


def test_leaf_statements_inside_fused_loop():
    sched = schedule(analyse(KERNELS["gesummv"][0]()))
    (root,) = sched.roots
    assert [_shape(c) for c in root.body] == [(((0, 1), (1, 1)), (0, 1)), 2]
