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


@pytest.mark.parametrize("runs", [1, 3])
def test_fuse_matches_python_when_values_leave_the_lazy_world(tmp_path, runs):
    """(``runs=3``: with adaptive fusion learning, then applying what it learned.)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               FLAMEFUSE_NATIVE="0", FLAMEFUSE_ADAPT="1" if runs > 1 else "0")
    want = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          env=env, check=True, timeout=300).stdout
    for _ in range(runs):
        got = subprocess.run([sys.executable, "-c", CLI, "fuse", str(SCRIPT)], capture_output=True,
                             text=True, env=env, timeout=600)
        assert got.returncode == 0, got.stderr[-2000:]
        assert got.stdout == want
    assert "shuffle 100000 " in want and "setitem ValueError" in want
