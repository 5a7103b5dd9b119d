"""The fourth camp's fuzz program on intdiv: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


n = 40000
i = np.arange(-n // 2, n // 2)
show("i // 7", lambda: i // 7)
show("i % -7", lambda: i % -7)
show("i // 0", lambda: i // 0)
show("i % 0", lambda: i % 0)
show("divmod", lambda: np.divmod(i, -3)[1])
f = i * 0.5
show("f // 0.0", lambda: f // 0.0)
show("f % 0.0", lambda: f % 0.0)
show("f % -1.5", lambda: f % -1.5)
show("fmod", lambda: np.fmod(f, -1.5))
show("round half even", lambda: np.round(f * 0.2))
show("round 2", lambda: np.round(f / 3, 2))
show("i8 // -1", lambda: np.full(n, -128, np.int8) // np.int8(-1))
show("u8 // 0", lambda: np.arange(n, dtype=np.uint8) // 0)
show("true div ints", lambda: i / i)
show("int pow neg exp", lambda: i ** -1)
show("float pow", lambda: f ** 2.5)
show("floor", lambda: np.floor(f / 7) == f // 7)
