"""``flamefuse fuse`` on a script whose values leave the lazy world (pickling, copying,
``shuffle`` in place, read-only arrays, float16/timedelta arrays, scalars as Python values,
SciPy's ``random_state``): the same output as ``python script.py`` (issue 26)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "data" / "runtime" / "escape.py"
CLI = "import sys; from flamefuse.cli import main; sys.exit(main(sys.argv[1:]))"


import pytest


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One cache folder for both cases, so the script's kernels compile once: adaptive fusion
    (``runs=3``) still learns from nothing, since the run without it writes no decisions
    (tests/runtime/test_adapt.py::test_adapt_off_never_runs_plain), and plans and kernel lists
    stay off (tests/conftest.py)."""
    return tmp_path_factory.mktemp("escape") / "cache"


@pytest.mark.parametrize("runs", [1, 3])
def test_fuse_matches_python_when_values_leave_the_lazy_world(cache, runs):
    """(``runs=3``: with adaptive fusion learning, then applying what it learned.)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), FLAMEFUSE_CACHE_DIR=str(cache),
               FLAMEFUSE_NATIVE="0", FLAMEFUSE_ADAPT="1" if runs > 1 else "0")
    want = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          env=env, check=True, timeout=300).stdout
    for _ in range(runs):
        got = subprocess.run([sys.executable, "-c", CLI, "fuse", str(SCRIPT)], capture_output=True,
                             text=True, env=env, timeout=600)
        assert got.returncode == 0, got.stderr[-2000:]
        assert got.stdout == want
    assert "shuffle 100000 " in want and "setitem ValueError" in want
