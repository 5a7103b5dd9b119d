"""A float cast to an integer type in a fused kernel gives NumPy's values where the value does not
fit (NaN, infinities, out of range: NumPy warns ``invalid value encountered in cast``).

The machine's direct conversion is undefined there; NumPy's C loops convert to 8 and 16 bits
through a 32-bit integer and truncate, and on x86-64 to ``uint64`` through ``int64`` with a
branch at 2**63 (:func:`flamefuse.runtime.kernel._float_to_int`). The kernels saturated
(``np.float64(-1.0).astype(uint64)`` gave 2**64 - 1 where NumPy does too, but NaN gave
2**64 - 1 for NumPy's 2**63; ``float32 -> int16`` of 3e9 gave -32768 for NumPy's 0). Not
checked: ``uint32``, where NumPy's own values differ between a short array (through ``int64``)
and a long one's vectorized loop (a branch at 2**31, which the kernel follows).
"""
from __future__ import annotations


import numpy
import pytest

from runtime_programs import fused_and_numpy

VALUES = [numpy.nan, numpy.inf, -numpy.inf, -1.0, 2.0 ** 64, 1e19, -3e9, 3e9, -1e10, 1e10, 255.9,
          -0.9, 65536.5, 2.0 ** 63, -2.0 ** 63, -2.0 ** 63 - 5000.0]
TARGETS = ["uint64", "uint16", "uint8", "int64", "int32", "int16", "int8"]


def program(np):
    x = np.asarray(numpy.tile(numpy.array(VALUES), 2500))
    f = x.astype(numpy.float32)
    return [numpy.asarray(y.astype(dt)) for dt in TARGETS for y in (x, f)]


@pytest.mark.parametrize("mode", ["compiled", "interpreted"])
def test_casts_of_values_that_do_not_fit_are_numpys(mode, monkeypatch):
    got, want = fused_and_numpy(program, mode, monkeypatch, recorded=len(TARGETS) * 2, quiet=True)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype
        assert g.tobytes() == w.tobytes(), (TARGETS[k // 2], "float32" if k % 2 else "float64")
