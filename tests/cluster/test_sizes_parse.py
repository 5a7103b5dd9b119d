"""Parsing, size inference (rigid sizes), graph facts."""
import pytest

from flamefuse.cluster import build, infer, parse_text
from flamefuse.errors import FlameError

FILTER_LEFT = """param array xs
ys1 = map {} xs   # map (+1)
ys2 = filter {} xs
return ys1 ys2
"""


def test_filter_left_scheme():
    assert infer(parse_text(FILTER_LEFT)).scheme == "∀k1. ∃k2. (xs:k1) → (ys1:k1, ys2:k2)"


def test_cross_and_gather_sizes():
    p = parse_text("param array xa xb\nc = cross {} xa xb\nm = map {} c\n"
                   "g = gather {} xa m\nreturn g\n")
    sizes = infer(p)
    assert sizes.scheme == "∀k1 k2. (xa:k1, xb:k2) → (g:(k1 × k2))"
    assert sizes.iters[2] == sizes.arrays["c"]


def test_map_of_filter_and_its_source_is_rejected():
    with pytest.raises(FlameError) as err:
        infer(parse_text("param array xs\nflt = filter {} xs\nys = map2 {} flt xs\nreturn ys\n",
                         "bad1.comb"))
    d = err.value.diagnostic
    assert (d.file, d.line) == ("bad1.comb", 3)
    assert "'ys'" in d.message and "parameter 'xs'" in d.message and "'flt'" in d.message


def test_map_of_two_filters_is_rejected():
    with pytest.raises(FlameError) as err:
        infer(parse_text("param array xs\nf1 = filter {} xs\nf2 = filter {} xs\n"
                         "ys = map {} f1 f2\nreturn ys\n"))
    assert "map 'ys'" in err.value.diagnostic.message
    assert err.value.diagnostic.line == 4


def test_map_of_one_filter_and_its_derivative_is_accepted():
    p = parse_text("param array xs\nf = filter {} xs\ng = map {} f\nh = map {} f g\nreturn h\n")
    assert infer(p).scheme == "∀k1. ∃k2. (xs:k1) → (h:k2)"


@pytest.mark.parametrize("text, where, words", [
    ("param array xs\nys = map {} xs zz\n", (2, 1), "'zz' is not defined"),
    ("param array xs\nys = fold {} xs xs\n", (2, 1), "takes 1 array"),
    ("param array xs\nys = map {s xs\n", (2, 15), "missing '}'"),
    ("param vector xs\n", (1, 7), "expected 'param array"),
    ("param array xs\nys = map {} xs : xs + q\n", (2, 23), "uses 'q'"),
    ("param array xs\nys = map {} xs : xs +\n", (2, None), "bad worker"),
    ("param array xs\nys = map {} xs : len(xs)\n", (2, 18), "only min, max and abs"),
    ("param array xs\nys = map3 {} xs xs\n", (2, 6), "map3 takes 3 arrays"),
    ("param array xs\nys = map {} xs\nys = map {} xs\n", (3, 1), "bound twice"),
    ("param array xs\nys = map {} xs $\n", (2, 16), "unexpected character '$'"),
    ("param array xs\nif = map {} xs\n", (2, 1), "'if' is reserved"),
])
def test_parse_errors_have_locations(text, where, words):
    with pytest.raises(FlameError) as err:
        parse_text(text, "f.comb")
    d = err.value.diagnostic
    assert d.file == "f.comb" and d.line == where[0] and words in d.message
    if where[1] is not None:
        assert d.col == where[1]


def test_graph_facts_for_normalize2(data):
    from flamefuse.cluster import parse_file
    g = build(parse_file(data / "normalize2.comb"))
    sum1, gts, sum2, ys1, ys2 = range(5)
    assert g.edges == {(gts, sum2): True, (sum1, ys1): False, (sum2, ys2): False}
    assert g.trans == (None, None, gts, None, None)
    assert g.concestors(sum1, sum2) == (sum1, gts)
    assert g.concestors(sum2, ys1) == (gts, ys1)
    possible = {frozenset((a, b)) for a in range(5) for b in range(a + 1, 5) if g.may_fuse(a, b)}
    assert possible == {frozenset(p) for p in [(sum1, gts), (sum1, sum2), (sum1, ys2),
                                               (gts, sum2), (gts, ys1), (sum2, ys1), (ys1, ys2)]}
    assert g.weight(sum1, sum2) == 1 and g.weight(sum1, gts) == 25


def test_corrected_trans_goes_through_maps():
    # a map over a filter's output has that filter as its transducer, and a fold
    # over that map fuses with the filter's siblings (paper's trans read literally
    # would miss it)
    p = parse_text("param array xs\nf = filter {} xs\nm = map {} f\ns = fold {} m\n"
                   "t = fold {} xs\nreturn s t\n")
    g = build(p)
    assert g.trans == (None, 0, 0, None)
    assert g.concestors(2, 3) == (0, 3)


def test_externals_and_gathers_prevent_fusion():
    p = parse_text("param array xs\na = map {} xs\n{s} e = external {} a\n"
                   "g = gather {} a xs\nm = map {s} e\nreturn g m\n")
    g = build(p)
    assert g.edges == {(0, 1): False, (0, 2): False, (1, 3): False}
    assert g.iters[1] is None and not g.may_fuse(0, 1)
