"""The strided overlap test is sound and exact on small views; basic indexing matches NumPy."""
import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

from flamefuse.lazy.array import index_view
from flamefuse.runtime.views import contiguous, make_view, overlap

views = st.integers(1, 3).flatmap(lambda nd: st.builds(
    make_view, st.integers(0, 30), st.tuples(*[st.integers(1, 4)] * nd),
    st.tuples(*[st.integers(-5, 5)] * nd)))


def elements(v):
    idx = numpy.indices(v.shape).reshape(len(v.shape), -1).T
    return {v.offset + int(numpy.dot(i, v.strides)) for i in idx}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(views, views)
def test_overlap_matches_brute_force(a, b):
    assert overlap(a, b) == bool(elements(a) & elements(b))


def test_overlap_heat_equation_views():
    g = contiguous((6, 7))
    c, north = index_view(g, (slice(1, -1), slice(1, -1))), index_view(g, (slice(None, -2), slice(1, -1)))
    left, right = index_view(g, (slice(None), slice(None, 3))), index_view(g, (slice(None), slice(3, None)))
    assert overlap(c, north) and not overlap(left, right)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.tuples(st.one_of(st.integers(-4, 3), st.slices(4)), st.slices(5), st.sampled_from([None, Ellipsis])))
def test_index_view_matches_numpy(key):
    base = numpy.arange(20).reshape(4, 5)
    key = key[:2] if key[2] is Ellipsis else key
    v = index_view(contiguous((4, 5)), key)
    expect = base[key]
    got = numpy.lib.stride_tricks.as_strided(base.reshape(-1)[v.offset:], v.shape,
                                             [s * base.itemsize for s in v.strides]) \
        if v.size else numpy.empty(v.shape, int)
    assert got.shape == expect.shape
    numpy.testing.assert_array_equal(got, expect)
