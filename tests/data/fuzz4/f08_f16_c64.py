"""The fourth camp's fuzz program on f16 c64: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


h = np.linspace(0, 10, 101).astype(np.float16)
show("f16 sum", lambda: h.sum())
show("f16 mean", lambda: h.mean())
show("f16 mul", lambda: h * h)
show("f16 overflow", lambda: h * 7000)
show("f16 + f32", lambda: h + np.float32(1))
show("f16 exp", lambda: np.exp(h))
z = (np.arange(12) + 1j * np.arange(12)[::-1]).astype(np.complex64)
show("c64 mul", lambda: z * z)
show("c64 * 2.5", lambda: z * 2.5)
show("c64 * f64 scalar", lambda: z * np.float64(2.5))
show("c64 abs", lambda: np.abs(z))
show("c64 sum", lambda: z.sum())
show("c64 mean", lambda: z.mean())
show("c64 / z", lambda: z / (z + 1))
show("angle", lambda: np.angle(z))
show("conj", lambda: np.conj(z) * z)
show("c64 sqrt", lambda: np.sqrt(z))
show("c128 exp", lambda: np.exp(z.astype(np.complex128) / 3))
show("c64 power 2", lambda: z ** 2)
show("c64 big", lambda: (z * 1e30) * (z * 1e30))
show("real/imag", lambda: (z.real * 2 + z.imag).dtype)
w = z.copy()
w.imag = 0
show("set imag", lambda: w)
