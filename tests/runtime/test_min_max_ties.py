"""``np.minimum``/``np.maximum`` of floats in a fused kernel give NumPy's operand on a tie and
NumPy's NaN, and ``np.clip`` keeps the value on a tie, as NumPy's do.

NumPy's ``minimum(a, b)`` is ``a if a < b or a is NaN else b``: on a tie (``-0.0`` and ``0.0``)
the second operand, so ``np.minimum(-0.0, 0.0)`` is ``0.0``; Numba's ``np.minimum`` kept the
first. NumPy's ``clip`` keeps ``x`` on a tie (``np.clip(-0.0, 0.0, 1.0)`` is ``-0.0``): the lazy
clip is ``minimum(hi, maximum(lo, x))``, bounds first.
"""
from __future__ import annotations

import numpy
import pytest

from runtime_programs import fused_and_numpy


def program(np, n=40000):
    y = np.asarray(numpy.linspace(-2.5, 2.5, n))
    z = -0.0 * y
    w = np.where(y > 2, numpy.nan, y)
    out = [np.minimum(z, 0.0), np.maximum(z, 0.0), np.minimum(0.0, z), np.maximum(-0.0, z),
           np.minimum(w, 0.5), np.maximum(0.5, w), np.minimum(w, w[::-1]),
           np.maximum(w.astype(numpy.float32), numpy.float32(-0.0)), np.clip(z, 0.0, 1.0),
           np.clip(-z, -1.0, -0.0), np.clip(w, -1, 1)]
    return [numpy.asarray(x) for x in out]


@pytest.mark.parametrize("mode", ["compiled", "interpreted"])
def test_min_max_and_clip_ties_and_nans_are_numpys(mode, monkeypatch):
    got, want = fused_and_numpy(program, mode, monkeypatch, recorded=11)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype
        assert g.tobytes() == w.tobytes(), k
