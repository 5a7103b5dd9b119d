"""A spec is user input: it never becomes code or a path outside the output folder (issue 28
items 2 and 3)."""
import subprocess
import sys
from pathlib import Path

import pytest

from flamefuse.cli import main

ROOT = Path(__file__).resolve().parents[2]

SPEC = """name: {name}
description: {description}
operands:
  A: {{kind: matrix, structure: symmetric}}
operations:
  - op: chol
    A: A
"""


def spec(tmp: Path, name="inj", description="plain", file="s.yaml") -> Path:
    path = tmp / file
    path.write_text(SPEC.format(name=name, description=description))
    return path


def test_a_description_cannot_inject_code(tmp_path, capsys):
    marker = tmp_path / "INJECTED"
    attack = f'\'x """ + __import__("os").system("touch {marker}") + """ y \\ z\''
    out = tmp_path / "out"
    assert main(["derive", str(spec(tmp_path, description=attack)), "--emit", str(out)]) == 0
    module = out / "inj.py"
    done = subprocess.run([sys.executable, "-c", "import inj; print(inj.__doc__)"], cwd=out,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not marker.exists()
    assert f'x """ + __import__("os").system("touch {marker}") + """ y \\ z' in done.stdout
    compile(module.read_text(), str(module), "exec")


@pytest.mark.parametrize("name", ["../escaped_spd", "import", "'spd inverse'", "'x; import os'", "'9lives'",
                                  "'a/b'", "'.hidden'"])
def test_a_name_must_be_an_identifier(tmp_path, capsys, name):
    out = tmp_path / "deep" / "out"
    path = spec(tmp_path, name=name)
    for flag in ("--emit", "--svg"):
        assert main(["derive", str(path), flag, str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{path}:1:7: error: the spec's name" in err and "Traceback" not in err, err
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != path]
    assert written == []


def test_a_reference_syntax_file_name_must_be_an_identifier(tmp_path, capsys):
    path = tmp_path / "spd inverse.txt"
    path.write_text((ROOT / "tests" / "core" / "data" / "cholesky.txt").read_text())
    assert main(["derive", str(path), "--json"]) == 0           # listing needs no name
    capsys.readouterr()
    assert main(["derive", str(path), "--emit", str(tmp_path / "out")]) == 2
    assert "the problem's name (a YAML spec's name, else the file name) 'spd inverse' is not a Python " \
           "identifier" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_emit_into_a_folder_that_cannot_be_written_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for flag in ("--emit", "--svg"):
        assert main(["derive", str(spec(tmp_path)), flag, str(blocker / "out")]) == 2
        err = capsys.readouterr().err
        assert "error: cannot write" in err and "Traceback" not in err, err
    assert main(["derive", str(spec(tmp_path)), "--latex", str(blocker / "x.tex")]) == 2
    assert "error: cannot write" in capsys.readouterr().err
