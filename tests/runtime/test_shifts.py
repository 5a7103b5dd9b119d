"""Integer shifts by a count outside ``0 .. bits-1`` give NumPy's values in fused kernels.

NumPy's shift loops test the count (``(size_t)k < bits``): ``x << 70`` is 0, ``x >> 70`` is 0,
or -1 for a negative ``x``, and a negative count is outside too. A kernel's ``x << k`` is the
machine's shift, undefined there (x86 takes the count modulo 64: ``1 << 70`` was 64)
(:func:`flamefuse.runtime.kernel._shift`).
"""
from __future__ import annotations

import numpy
import pytest

from runtime_programs import fused_and_numpy


def program(np, n=40000):
    a = np.asarray(numpy.arange(n, dtype=numpy.int64) - n // 2)
    k = np.asarray(numpy.arange(n, dtype=numpy.int64) % 140 - 5)
    b = np.asarray((numpy.arange(n) % 256 - 128).astype(numpy.int8))
    k8 = np.asarray((numpy.arange(n) % 20 - 3).astype(numpy.int8))
    u = np.asarray(numpy.arange(n, dtype=numpy.uint64) * numpy.uint64(2 ** 54))
    ku = np.asarray((numpy.arange(n) % 100).astype(numpy.uint64))
    c = a * 1
    c <<= 65
    out = [a << 70, a >> 70, a << k, a >> k, b << k8, b >> k8, b << 9, u << ku, u >> ku, c,
           (a + 1) >> 64]
    return [numpy.asarray(x) for x in out]


@pytest.mark.parametrize("mode", ["compiled", "interpreted"])
def test_shifts_outside_the_width_are_numpys(request, mode, monkeypatch):
    got, want = fused_and_numpy(program, mode, monkeypatch, recorded=11)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        assert g.tobytes() == w.tobytes()
