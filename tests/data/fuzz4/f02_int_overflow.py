"""The fourth camp's fuzz program on int overflow: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


a = np.arange(1, 40, dtype=np.int32) * 100000
show("cumsum i32", lambda: np.cumsum(a * a))
show("cumprod i64", lambda: np.cumprod(np.arange(1, 30)))
show("sum i8", lambda: np.arange(100, dtype=np.int8).sum())
show("sum i8 dtype", lambda: np.arange(100, dtype=np.int8).sum(dtype=np.int8))
show("abs min", lambda: np.abs(np.array([-128, -5, 3], dtype=np.int8)))
show("neg u8", lambda: -np.arange(5, dtype=np.uint8))
show("pow overflow", lambda: np.arange(2, 40) ** 20)
show("left shift", lambda: np.arange(60, 70) << 3)
show("mul i64", lambda: np.full(10, 2**62) * 4)
show("int min // -1", lambda: np.array([np.iinfo(np.int64).min] * 8) // -1)
show("int8 mean", lambda: np.arange(-100, 100, dtype=np.int8).mean())
show("uint64 - int", lambda: np.arange(10, dtype=np.uint64) - 20)
x = np.arange(50, dtype=np.int16) * 1000
x += 30000
show("inplace wrap", lambda: x)
show("int //0", lambda: np.arange(10) // np.arange(10))
show("astype wrap", lambda: (np.arange(10) * 1e10).astype(np.int32))
