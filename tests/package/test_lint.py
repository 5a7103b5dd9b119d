"""The linter (ruff, configured in pyproject.toml: defects, not style) finds nothing.

Skipped, with the reason, where ruff is not installed (it is in the ``test`` extra).
"""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> list[str] | None:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


def test_ruff_finds_nothing():
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install 'flamefuse[test]' or pip install ruff)")
    done = subprocess.run([*ruff, "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_reads_the_projects_rules():
    """The configuration is the one in pyproject.toml, and its rules catch a real defect."""
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install 'flamefuse[test]' or pip install ruff)")
    bad = "def f(xs=[]):\n    return undefined_name + xs\n"
    done = subprocess.run([*ruff, "check", "--no-cache", "--output-format", "concise", "--stdin-filename",
                           str(ROOT / "flamefuse" / "probe.py"), "-"], input=bad, capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1 and "F821" in done.stdout and "B006" in done.stdout, done.stdout + done.stderr
