"""Freed temporaries are reused, and a buffer anything can still see is never reused."""
import numpy

import flamefuse.lazy as lazy
from flamefuse.runtime import pool

N = 100_000


def test_loop_temporary_is_reused():
    x = lazy.asarray(numpy.linspace(0.0, 1.0, N))
    before = pool.STATS["reused"]
    total = 0.0
    for k in range(4):
        t = x * float(k)          # alive at each flush: written to a buffer
        total += float(t.sum())
    assert pool.STATS["reused"] > before
    assert numpy.isclose(total, sum(k * numpy.linspace(0.0, 1.0, N).sum() for k in range(4)))


def test_buffer_with_a_numpy_view_is_not_reused():
    x = lazy.asarray(numpy.arange(N, dtype=float))
    y = x * 2.0
    seen = numpy.asarray(y)
    del y
    for k in range(3):
        z = x * (3.0 + k)
        float(z.sum())
    assert numpy.array_equal(seen, numpy.arange(N) * 2.0)


def test_user_array_is_never_pooled():
    a = numpy.arange(N, dtype=float)
    x = lazy.asarray(a)
    x += 1.0
    lazy.flush()
    del x
    z = lazy.asarray(numpy.zeros(N)) + 5.0
    float(z.sum())
    assert numpy.array_equal(a, numpy.arange(N) + 1.0)


def test_take_matches_dtype_and_size():
    buf = pool.take(N, "float32")
    assert buf.dtype == numpy.float32 and buf.shape == (N,)
    pool.give(buf)
    assert pool.take(N, "float64").dtype == numpy.float64
    assert pool.take(N, "float32") is buf
