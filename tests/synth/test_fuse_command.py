"""``flamefuse fuse --explain`` runs NumPy and SciPy linear-algebra scripts unchanged and names
the chains they ran as."""
import subprocess
import sys
from pathlib import Path

from flamefuse.cli import main

DATA = Path(__file__).resolve().parent / "data"


def _plain(script, n):
    out = subprocess.run([sys.executable, str(DATA / script), str(n)], capture_output=True, text=True,
                         check=True).stdout
    return float(out)


def test_scipy_script_runs_unchanged_and_explains(capsys):
    assert main(["fuse", "--explain", "--eager-below", "100", str(DATA / "gp_scipy.py"), "150"]) == 0
    out, err = capsys.readouterr()
    assert float(out) < 1e-9 and _plain("gp_scipy.py", 150) < 1e-9
    lines = [line for line in err.splitlines() if line.startswith("linalg:")]
    assert any(line.startswith("linalg: chol -> trsm -> trsm_lt: not one fused loop (operations 0 (chol), "
                               "2 (trsm_lt) cannot share one loop") and "chol -> trsm as chol_trsm variant" in line
               for line in lines), lines
    assert "scipy.linalg.cholesky" in err and "linear-algebra groups" in err


def test_numpy_spd_inverse_explained_as_spd_inverse(capsys):
    assert main(["fuse", "--explain", "--eager-below", "100", str(DATA / "spd_numpy.py"), "150"]) == 0
    out, err = capsys.readouterr()
    assert float(out) < 1e-10
    assert any(line.startswith("linalg: chol -> trinv -> ltl as spd_inverse variant 1, n = 150")
               for line in err.splitlines()), err
    assert "syrk (the lower triangle)" in err


def test_without_explain_no_linalg_lines(capsys):
    assert main(["fuse", "--eager-below", "100", str(DATA / "spd_numpy.py"), "150"]) == 0
    assert "linalg:" not in capsys.readouterr().err
