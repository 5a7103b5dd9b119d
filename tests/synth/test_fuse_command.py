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
    # the Cholesky factorization runs at its call (it may raise there); the solves after it with
    # check_finite=True (SciPy's default) read their right-hand side's values, so each runs alone
    assert any(line.startswith("linalg: chol as LAPACK calls (fused with nothing: potrf)") for line in lines), lines
    # a solve with one right-hand side fused with nothing is LAPACK's trtrs (a blocked kernel's
    # BLAS calls cost three times as much for a vector)
    assert any(line.startswith("linalg: trsm as LAPACK calls (one right-hand side") for line in lines), lines
    assert "scipy.linalg.cholesky" in err and "linear-algebra groups" in err


def test_numpy_spd_inverse_explained_as_spd_inverse(capsys):
    assert main(["fuse", "--explain", "--eager-below", "100", str(DATA / "spd_numpy.py"), "150"]) == 0
    out, err = capsys.readouterr()
    assert float(out) < 1e-10
    lines = err.splitlines()        # chol runs at its call (where NumPy raises), the rest fuses
    assert any(line.startswith("linalg: chol as LAPACK calls (fused with nothing: potrf)") for line in lines), err
    assert any(line.startswith("linalg: trinv -> ltl as trinv_ltl variant") for line in lines), err
    assert "syrk (the lower triangle)" in err


def test_without_explain_no_linalg_lines(capsys):
    assert main(["fuse", "--eager-below", "100", str(DATA / "spd_numpy.py"), "150"]) == 0
    assert "linalg:" not in capsys.readouterr().err


def test_numpy_linalg_import_styles_are_recorded(capsys):
    """``import numpy.linalg as la`` and ``from numpy.linalg import cholesky, inv`` reach the
    recorded calls (they were NumPy's own, unrecorded), as ``from scipy.linalg import ...`` does."""
    assert main(["fuse", "--explain", "--eager-below", "100", str(DATA / "import_styles.py"), "150"]) == 0
    out, err = capsys.readouterr()
    assert float(out) < 1e-9 and _plain("import_styles.py", 150) < 1e-9
    assert "[numpy.linalg.cholesky]" in err and "numpy.linalg.inv" in err and "[numpy.linalg.solve]" in err, err
    assert "scipy.linalg.cho_solve" in err, err
    assert "[numpy.linalg.slogdet]" in err and "[numpy.linalg.det]" in err, err
