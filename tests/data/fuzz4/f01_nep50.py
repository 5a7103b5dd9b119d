"""The fourth camp's fuzz program on nep50: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


# NEP 50: Python scalars are weak, NumPy scalars are strong
u8 = np.arange(250, 256, dtype=np.uint8)
i8 = np.array([-128, -1, 0, 1, 127], dtype=np.int8)
f32 = np.linspace(0, 1, 7, dtype=np.float32)
show("u8+1", lambda: u8 + 1)
show("u8+300", lambda: u8 + 300)
show("u8+np.int64(300)", lambda: u8 + np.int64(300))
show("i8*2.5", lambda: i8 * 2.5)
show("f32+1e40", lambda: f32 + 1e40)
show("f32*np.float64(2)", lambda: f32 * np.float64(2))
show("f32+2**70", lambda: f32 + 2 ** 70)
show("i8-1", lambda: i8 - 1)
show("i8//-1", lambda: i8 // -1)
show("u8-1j", lambda: u8 - 1j)
show("np.int32(5)+2**40", lambda: np.int32(5) + 2 ** 40)
show("bool+bool", lambda: (u8 > 252) + (u8 < 254))
show("u8*u8", lambda: u8 * u8)
show("f16+1", lambda: f32.astype(np.float16) + 1)
show("u8/2", lambda: u8 / 2)
show("u8 == 300", lambda: u8 == 300)
show("u8 < -1", lambda: u8 < -1)
show("i8 % 0", lambda: i8 % 0)
s = np.float32(3.5)
show("f32 scalar * 2", lambda: s * 2)
show("int array ** -1", lambda: np.arange(1, 5) ** -1)
show("int array ** 0.5", lambda: np.arange(1, 50) ** 0.5)
