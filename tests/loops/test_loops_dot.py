"""NumPy's 1-D dot products, bit for bit, in compiled code (flamefuse.loops.numba_parts)."""
import itertools

import numpy as np
import pytest

pytest.importorskip("numba")

from flamefuse.loops.blas import ddot_address  # noqa: E402


@pytest.fixture(scope="module")
def dots():
    from numba import njit

    from flamefuse.loops.numba_parts import _dot_mm, _dot_np

    @njit
    def both(x, a, b, c, d, e, g, fp, s1, s2):
        u, v = x[a:b:c], x[d:e:g]
        return _dot_np(u, v, fp, s1, s2), _dot_mm(u, v, fp)
    return both


def _slice(start, n, step):
    stop = start + step * n
    return start, (stop if stop >= 0 else -(2 ** 40)), step


def test_numpy_blas_is_found():
    assert ddot_address()


def test_dots_are_numpys_bit_for_bit_for_many_lengths_and_strides(dots):
    rng = np.random.default_rng(7)
    fp = ddot_address()
    differ = 0
    for n in (0, 1, 2, 3, 4, 7, 8, 9, 16, 17, 33, 100, 511, 2049):
        size = 6 * n + 20
        x = rng.standard_normal(size) * 10.0 ** rng.integers(-8, 8, size)
        s1, s2 = np.empty(size), np.empty(size)
        for c, g in itertools.product((1, 2, 3, -1, -3), repeat=2):
            a, b, _ = _slice(1 if c > 0 else abs(c) * n + 2, n, c)
            d, e, _ = _slice(4 if g > 0 else abs(g) * n + 5, n, g)
            u, v = x[a:b:c], x[d:e:g]
            assert len(u) == len(v) == n
            got_np, got_mm = dots(x, a, b, c, d, e, g, fp, s1, s2)
            assert np.float64(got_np).tobytes() == np.dot(u, v).tobytes(), (n, c, g)
            assert np.float64(got_mm).tobytes() == np.float64(u @ v).tobytes(), (n, c, g)
            differ += np.dot(u, v) != u @ v
    # the two NumPy paths (BLAS on a copy, the sequential loop) do differ: the check above can fail
    assert differ > 0


def test_length_one_and_signed_zero(dots):
    """np.dot of length 1 is the bare product (-0.0 kept); @ adds it to +0.0."""
    x = np.array([-1.0, 0.0, 2.0])
    s = np.empty(3)
    got_np, got_mm = dots(x, 0, 1, 1, 1, 2, 1, ddot_address(), s, s)
    assert np.signbit(np.dot(x[0:1], x[1:2])) and np.signbit(got_np)
    assert not np.signbit(x[0:1] @ x[1:2]) and not np.signbit(got_mm)


def test_lengths_that_differ_raise(dots):
    x = np.ones(10)
    s = np.empty(10)
    with pytest.raises(ValueError):
        dots(x, 0, 3, 1, 0, 4, 1, ddot_address(), s, s)
