"""``flamefuse fuse`` runs a NumPy script on flamefuse.lazy; the SPD example app matches NumPy."""
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from flamefuse.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "runtime"


def test_fuse_runs_script_and_prints_summary(capsys):
    expected = subprocess.run([sys.executable, str(DATA / "heat.py")], capture_output=True,
                              text=True, check=True).stdout
    assert main(["fuse", "--eager-below", "0", str(DATA / "heat.py")]) == 0
    out, err = capsys.readouterr()
    assert out == expected
    assert "operations recorded" in err and "plans built" in err and "fallbacks 0" in err


def test_fuse_reports_missing_script(capsys):
    assert main(["fuse", str(DATA / "no_such_script.py")]) == 2
    assert "no such script" in capsys.readouterr().err


def _spd_inverse(n):
    i = numpy.arange(float(n))
    d = i[:, None] - i[None, :]
    return numpy.linalg.inv(numpy.exp(-numpy.abs(d) / 4.0) + (d == 0) * float(n))


def test_spd_example_app_matches_numpy_with_scipy_kernel():
    app = runpy.run_path(str(ROOT / "examples" / "spd_lazy_app.py"))
    inv, norm = app["run"](150, app["scipy_spd_inverse_inplace"])
    want = _spd_inverse(150)
    numpy.testing.assert_allclose(numpy.asarray(inv), want, rtol=1e-10, atol=1e-14)
    assert abs(norm / numpy.linalg.norm(want) - 1) < 1e-12


@pytest.mark.skipif(not (ROOT / "generated" / "spd_inverse.py").is_file(),
                    reason="generated/spd_inverse.py not generated yet")
def test_spd_example_app_with_generated_kernel():
    """Run as a user would (repository root on the path), with Numba's cache where a user's is:
    beside the sources (the kernel module, flamefuse's own functions) and in flamefuse's cache
    folder (the run-time kernels), so the kernels the suite compiled already are read, not compiled
    again.  A cold first run of a generated module is tests/codegen/test_codegen_module.py's and
    tests/core/test_cache_healing.py's subject."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "spd_lazy_app.py"), "150"],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True).stdout
    assert "inverse by generated_spd_inverse_inplace" in out
    norm = float(out.split("= ")[1].split()[0])
    assert abs(norm / numpy.linalg.norm(_spd_inverse(150)) - 1) < 1e-10
