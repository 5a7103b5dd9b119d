"""The fourth camp's fuzz program on nan: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


rng = np.random.default_rng(12)
a = rng.standard_normal(40000)
a[::7] = np.nan
a[::11] = np.inf
show("max nan", lambda: a.max())
show("nanmax", lambda: np.nanmax(a))
show("maximum nan", lambda: np.maximum(a, 0.5))
show("fmax", lambda: np.fmax(a, 0.5))
show("argmax nan", lambda: np.argmax(a))
show("nansum", lambda: np.nansum(a))
show("nanmean", lambda: np.nanmean(a[a < 0]))
show("where nan", lambda: np.where(np.isnan(a), 0.0, a).sum())
show("sort nan", lambda: np.sort(a)[-5:])
show("nan compare", lambda: (a > 0).sum() + (a <= 0).sum())
show("inf - inf", lambda: (a - a))
show("sign", lambda: np.sign(a))
show("clip nan", lambda: np.clip(a, -1, 1))
show("mean", lambda: a.mean())
show("isclose", lambda: np.isclose(a, a).sum())
show("allclose", lambda: np.allclose(a, a, equal_nan=True))
b = a.copy()
b[np.isnan(b)] = -1
show("fill nan", lambda: b.sum())
