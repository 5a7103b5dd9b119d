"""The shipped specs and generated kernels, by name: ``flamefuse derive NAME``, ``flamefuse.kernels``.

In a checkout they are the repository's ``specs/`` and ``generated/`` (a wheel
carries them inside the package: tests/package/test_wheel.py).
"""
import json
from pathlib import Path

import numpy as np
import pytest

from flamefuse import shipped
from flamefuse.cli import main
from flamefuse.errors import FlameError

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_specs_are_the_repositorys():
    assert shipped.spec_names() == sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))
    assert shipped.spec_path("cholesky") == ROOT / "specs" / "cholesky.yaml"


def test_derive_takes_a_shipped_specs_name(capsys):
    assert main(["derive", "trinv", "--json"]) == 0
    by_name = json.loads(capsys.readouterr().out)
    assert main(["derive", str(ROOT / "specs" / "trinv.yaml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == by_name and by_name["count"] == 5


def test_derive_lists_the_shipped_specs(capsys):
    assert main(["derive", "--list"]) == 0
    assert capsys.readouterr().out.split() == shipped.spec_names()


@pytest.mark.parametrize("bad", ["nope", "../specs/cholesky", "spd_inverse.yaml", "a/b"])
def test_an_unknown_spec_fails_clearly(bad, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["derive", bad]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert ("shipped specs: chol_backsolve" in err) if bad == "nope" else f"no such file: {bad}" in err


def test_a_file_named_like_a_spec_is_read_when_no_spec_has_that_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").write_text((ROOT / "tests" / "core" / "data" / "trinv.txt").read_text())
    assert shipped.spec_path("mine") == Path("mine")
    with pytest.raises(FlameError, match="neither a file nor a shipped spec"):
        shipped.spec_path("other")


def test_the_kernels_import_as_flamefuse_kernels():
    from flamefuse.kernels import spd_inverse
    assert Path(spd_inverse.__file__) == ROOT / "generated" / "spd_inverse.py"
    assert shipped.kernel("spd_inverse") is spd_inverse and shipped.kernel("no_such_spec") is None
    rng = np.random.default_rng(0)
    m = rng.standard_normal((40, 40))
    a = m @ m.T + 40 * np.eye(40)
    assert np.allclose(spd_inverse.spd_inverse(a), np.linalg.inv(a), rtol=1e-10, atol=1e-12)


def test_every_generated_module_has_a_shipped_spec():
    assert {p.stem for p in (ROOT / "generated").glob("*.py")} <= set(shipped.spec_names())
