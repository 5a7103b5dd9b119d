"""The one union-find (flamefuse.unionfind) against a brute-force partition, and its users' order."""
from hypothesis import given, settings, strategies as st

from flamefuse import unionfind


def brute(n, pairs):
    """Components by repeated merging of any two blocks a pair connects (no union-find)."""
    blocks = [{i} for i in range(n)]
    changed = True
    while changed:
        changed = False
        for a, b in pairs:
            ba = next(k for k, s in enumerate(blocks) if a in s)
            bb = next(k for k, s in enumerate(blocks) if b in s)
            if ba != bb:
                blocks = [s for k, s in enumerate(blocks) if k not in (ba, bb)] + [blocks[ba] | blocks[bb]]
                changed = True
                break
    return sorted(sorted(s) for s in blocks)


graphs = st.integers(0, 14).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20) if n else st.just([])))


@settings(max_examples=60, deadline=None)
@given(graphs)
def test_groups_is_the_brute_force_partition_in_first_member_order(graph):
    n, pairs = graph
    got = unionfind.groups(n, pairs)
    assert sorted(got) == brute(n, pairs)
    assert all(c == sorted(c) for c in got) and [c[0] for c in got] == sorted(c[0] for c in got)


@settings(max_examples=60, deadline=None)
@given(graphs, st.randoms(use_true_random=False))
def test_disjoint_sets_of_any_items_and_of_integers_agree_with_brute_force(graph, rnd):
    n, pairs = graph
    names = [f"x{i}" for i in range(n)]
    rnd.shuffle(names)                      # any hashable items, any order of first use
    named, ints = unionfind.DisjointSets(), unionfind.DisjointSets(n)
    for a, b in pairs:
        named.union(names[a], names[b])
        ints.union(a, b)
    want = brute(n, pairs)
    assert sorted(sorted(names.index(x) for x in g) for g in named.groups(names)) == want
    assert sorted(ints.groups(range(n))) == want
    for a in range(n):                      # find: one representative per set
        for b in range(n):
            same = any(a in c and b in c for c in want)
            assert (named.find(names[a]) == named.find(names[b])) == same == (ints.find(a) == ints.find(b))


def test_the_partitioner_clusters_and_dimension_classes_use_it():
    import inspect

    from flamefuse.cluster import baselines, solve
    from flamefuse.derive import dims
    from flamefuse.runtime import partition
    assert issubclass(dims._Unify, unionfind.DisjointSets)
    for module in (partition, solve, baselines):
        assert "unionfind.groups(" in inspect.getsource(module)
    u = dims._Unify()
    u.union(("A", 0), None)                 # an undivided dimension joins nothing
    u.union(("A", 0), ("B", 1))
    assert u.find(("A", 0)) == u.find(("B", 1)) != u.find(("A", 1))
