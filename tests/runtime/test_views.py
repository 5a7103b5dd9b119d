"""The strided overlap test is sound and exact on small views; basic indexing matches NumPy."""
import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

from flamefuse.lazy.indexing import index_view
from flamefuse.runtime.views import contiguous, grid, grid_index, make_view, overlap

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


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.tuples(st.one_of(st.integers(-4, 3), st.slices(4)), st.slices(5), st.sampled_from([None, Ellipsis])),
       st.integers(0, 3), st.integers(0, 3), st.booleans())
def test_index_view_matches_numpy(key, keep, at, ellipsis):
    base = numpy.arange(20).reshape(4, 5)
    key = tuple(k for k in key[:keep] if k is not Ellipsis)        # 0..2 real indices and None
    if ellipsis:                                                    # ... anywhere, at most once
        key = key[:at] + (Ellipsis,) + key[at:]
    v = index_view(contiguous((4, 5)), key)
    expect = base[key]
    got = numpy.lib.stride_tricks.as_strided(base.reshape(-1)[v.offset:], v.shape,
                                             [s * base.itemsize for s in v.strides]) \
        if v.size else numpy.empty(v.shape, int)
    assert got.shape == expect.shape
    numpy.testing.assert_array_equal(got, expect)


def grid_views(draw_shape, keys, flip):
    base = contiguous(draw_shape)
    out = []
    for key, f in zip(keys, flip):
        v = index_view(base, key[:len(draw_shape)])
        out.append(make_view(v.offset, v.shape[::-1], v.strides[::-1]) if f else v)
    return out


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3),
       st.lists(st.tuples(st.slices(5), st.slices(5), st.slices(5)), min_size=1, max_size=3),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_grid_subscripts_address_every_element(shape, keys, flip):
    vs = grid_views(tuple(shape), keys, flip)
    size = int(numpy.prod(shape))
    steps, gshape = grid(size, vs)
    assert int(numpy.prod(gshape)) == size
    for v in vs:
        subs = grid_index(v, steps, gshape)
        for i in numpy.ndindex(*v.shape):
            coords = [c + sum(m * i[j] for j, m in ts) for c, ts in subs]
            assert all(0 <= c < n for c, n in zip(coords, gshape))
            assert sum(s * c for s, c in zip(steps, coords)) == v.offset + int(numpy.dot(i, v.strides))


def test_grid_of_stencil_views_is_the_2d_array():
    g = contiguous((6, 7))
    keys = [(slice(1, -1), slice(1, -1)), (slice(None, -2), slice(1, -1)), (slice(2, None), slice(2, None))]
    steps, shape = grid(42, [index_view(g, k) for k in keys])
    assert (steps, shape) == ((7, 1), (6, 7))
    assert grid_index(index_view(g, keys[2]), steps, shape) == ((2, ((0, 1),)), (2, ((1, 1),)))


def test_reversed_strided_and_transposed_views_in_numba_kernels():
    """Negative and non-unit strides become unsigned subscripts (``c - i``) in real kernels."""
    import flamefuse.lazy as lazy
    a = numpy.arange(60000.0).reshape(200, 300)
    lazy.configure(eager_below=0)
    try:
        x = lazy.asarray(a)
        r = (x[::-1, ::-2] * 2.0 + x[:, :150]).sum(axis=0)
        t = lazy.sum(x.T[5:, ::-3])
        y = lazy.asarray(a.copy())
        y[::-1] = y * 3.0
        numpy.testing.assert_allclose(numpy.asarray(r), (a[::-1, ::-2] * 2 + a[:, :150]).sum(axis=0))
        assert float(t) == a.T[5:, ::-3].sum()
        numpy.testing.assert_array_equal(numpy.asarray(y), a[::-1] * 3.0)
    finally:
        lazy.configure(eager_below=1 << 15)
