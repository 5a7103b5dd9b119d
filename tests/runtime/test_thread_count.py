"""A cache made under one thread count serves runs under any other (issue 26, item 1).

A plan stored on disk, the kernels a script used last time and their native libraries are
shared by every later run, whatever its ``NUMBA_NUM_THREADS``, CPU affinity (``taskset``) or
cgroup limit. A kernel that fixed its chunk count from the thread count at generation time,
run by a launcher that sized its partial results by the current count, summed a fraction of
the array (an eighth, with exit status 0). Here ``flamefuse fuse`` runs one script cold under
3 threads, then warm under 1, one CPU, 2 and Numba only: every run prints NumPy's values, and
the same bits every time (the summation order never depends on the thread count: not for the
element-wise reductions' chunks, nor for a product group's shares, ``(A @ v) @ A``).
"""
import os
import re
import subprocess
import sys

import numpy
import pytest

from flamefuse.runtime import native

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = """\
import numpy as np
x = np.arange(200000.)
y = np.sin(x) * 2.0 + x * x
z = (y - 1.0) / 3.0
print(repr(float(z.sum())))
m = np.cos(np.arange(300000.).reshape(600, 500)) * 2.0 + 1.0
print(repr(m.sum(axis=1).tolist()))
print(repr(float(np.mean(m * m))))
A = np.random.default_rng(0).standard_normal((1200, 300))
v = np.sin(np.arange(300.))
print(repr(((A @ v) @ A).tolist()))
"""
# the command with every plan stored (some programs have fewer than plan_cache.WORTH_OPS ops)
# and, when FF_CPU is set, the process bound to that CPU first (as `taskset -c` would)
LAUNCH = """\
import os, sys
if os.environ.get("FF_CPU"):
    os.sched_setaffinity(0, {int(os.environ["FF_CPU"])})
from flamefuse.runtime import plan_cache
plan_cache.WORTH_OPS = 0
from flamefuse.cli import main
sys.exit(main(sys.argv[1:]))
"""


def expected():
    ns = {"np": numpy, "print": lambda s: out.append(eval(s))}
    out = []
    exec(SCRIPT.replace("import numpy as np\n", ""), ns)
    return out


def fuse(script, cache, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("NUMBA_NUM_THREADS", "FF_CPU")}
    full.update(FLAMEFUSE_CACHE_DIR=str(cache), FLAMEFUSE_NATIVE="1", FLAMEFUSE_PRELOAD="1",
                FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=ROOT)
    full.update(env)
    done = subprocess.run([sys.executable, "-c", LAUNCH, "fuse", str(script)], env=full,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return [eval(line) for line in done.stdout.splitlines()], done.stderr


def count(stderr, label):
    return int(re.search(label + r" (\d+)", stderr).group(1))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_warm_cache_gives_the_same_results_under_any_thread_count(tmp_path):
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script, cache = tmp_path / "s.py", tmp_path / "cache"
    script.write_text(SCRIPT)
    want = expected()
    cold, _ = fuse(script, cache, NUMBA_NUM_THREADS="3")
    assert list(cache.glob("native/*.so")) and list(cache.glob("plans/*.plan"))
    runs = {"1 thread": {"NUMBA_NUM_THREADS": "1"},
            "one CPU": {"FF_CPU": str(min(os.sched_getaffinity(0)))},
            "2 threads": {"NUMBA_NUM_THREADS": "2"},
            "Numba, 1 thread": {"NUMBA_NUM_THREADS": "1", "FLAMEFUSE_NATIVE": "0"}}
    for name, env in runs.items():
        got, stderr = fuse(script, cache, **env)
        assert count(stderr, "loaded from disk") >= 3, (name, stderr)      # the stored plans
        if env.get("FLAMEFUSE_NATIVE") != "0":
            assert count(stderr, "used by") >= 3, (name, stderr)            # their libraries
        assert got == cold, name                                            # bit for bit
    total, rows, mean, product = cold
    A = numpy.random.default_rng(0).standard_normal((1200, 300))
    numpy.testing.assert_allclose(product, (A @ numpy.sin(numpy.arange(300.))) @ A, rtol=1e-12)
    assert total == pytest.approx(want[0], rel=1e-13)
    numpy.testing.assert_allclose(rows, want[1], rtol=1e-13)
    assert mean == pytest.approx(want[2], rel=1e-13)
