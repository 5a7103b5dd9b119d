"""derive's outputs beyond the invariants: loop bodies, --emit, --latex."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from flamefuse.cli import main

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


def test_loop_bodies_printed_and_in_json(capsys):
    assert main(["derive", str(SPECS / "cholesky.yaml"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [loop["body"] for loop in got["loops"]] == [
        [["A10 := A10 A00^{-T}", "A11 -= A10 A10^T", "A11 := chol(A11)"]],
        [["A11 -= A10 A10^T", "A21 -= A20 A10^T", "A11 := chol(A11)", "A21 := A21 A11^{-T}"]],
        [["A11 := chol(A11)", "A21 := A21 A11^{-T}", "A22 -= A21 A21^T"]]]
    assert main(["derive", str(SPECS / "cholesky.yaml")]) == 0
    text = capsys.readouterr().out
    assert "loop body, traversing TL->BR" in text and "A22 -= A21 A21^T" in text


EXPLICIT = """name: scale
operands:
  b: {kind: vector}
operations:
  - name: scale
    tasks:
      - op b_T~ = 2 * b_T
      - op b_B~ = 2 * b_B
"""


def test_spec_without_exact_semantics_says_so(tmp_path, capsys):
    (tmp_path / "scale.yaml").write_text(EXPLICIT)
    assert main(["derive", str(tmp_path / "scale.yaml")]) == 0
    text = capsys.readouterr().out
    assert "no exact PME" in text and "not derived" in text


def test_emit_writes_the_committed_module(tmp_path, capsys):
    assert main(["derive", str(SPECS / "spd_inverse.yaml"), "--emit", str(tmp_path)]) == 0
    assert (tmp_path / "spd_inverse.py").read_text() == (ROOT / "generated" / "spd_inverse.py").read_text()


def test_emit_of_underivable_spec_is_an_error_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "scale.yaml").write_text(EXPLICIT)
    out = tmp_path / "out"
    assert main(["derive", str(tmp_path / "scale.yaml"), "--emit", str(out)]) == 2
    assert not out.exists() or list(out.iterdir()) == []
    assert "error" in capsys.readouterr().err


def test_latex_document(tmp_path, capsys):
    tex = tmp_path / "spd.tex"
    assert main(["derive", str(SPECS / "spd_inverse.yaml"), "--latex", str(tex)]) == 0
    text = tex.read_text()
    assert text.startswith(r"\documentclass") and text.rstrip().endswith(r"\end{document}")
    for needle in (r"\newcommand{\FlaTwoByTwo}", "Repartition", "Continue with", r"\textbf{while}",
                   r"A_{11} \mathrel{:=} \mathrm{chol}(A_{11})", r"A_{00} \mathrel{+}= A_{10}^T A_{10}",
                   r"\Computed", r"\Partial", r"\Uncomputed"):
        assert needle in text, needle
    assert text.count("{") == text.count("}")


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex not installed (`make tex-tools` installs it); the LaTeX source is "
                           "checked by test_latex_document")
def test_latex_document_compiles_and_renders(tmp_path, capsys):
    tex = tmp_path / "spd.tex"
    assert main(["derive", str(SPECS / "spd_inverse.yaml"), "--latex", str(tex)]) == 0
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "spd.pdf").stat().st_size > 1000
    if shutil.which("pdftoppm"):
        subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "spd.pdf", "page"],
                       cwd=tmp_path, check=True)
        assert (tmp_path / "page-1.png").stat().st_size > 1000


def test_latex_of_a_two_class_traversal(tmp_path, capsys):
    """Sylvester, BL->TR: C's 3x3 view has its row line after the second block row and its column
    line after the first; A moves bottom-up, B left to right, and the loop runs until both are through."""
    tex = tmp_path / "sylv.tex"
    assert main(["derive", str(SPECS / "sylvester.yaml"), "--latex", str(tex)]) == 0
    text = tex.read_text()
    assert (r"\left(\begin{array}{c|cc} C_{00} & C_{01} & C_{02} \\ C_{10} & C_{11} & C_{12} \\ \hline "
            r"C_{20} & C_{21} & C_{22} \end{array}\right)") in text
    assert r"\textbf{while} $m(A_{BR}) < m(A) \vee m(B_{TL}) < m(B)$" in text
    assert r"C_{21} \mathrel{:=} \mathrm{sylv}(A_{22}, B_{11}, C_{21})" in text
    assert "Not derived" not in text


def test_one_command_table_names_every_command():
    """cli.COMMAND_OF is the one table: the full parser has exactly its commands, and each
    command's parser alone is built from its own module (``tiles`` was missing)."""
    from flamefuse import cli
    sub = next(a for a in cli.build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert set(sub.choices) == set(cli.COMMAND_OF)
    for name in cli.COMMAND_OF:
        only = next(a for a in cli.build_parser(name)._actions
                    if a.__class__.__name__ == "_SubParsersAction")
        assert name in only.choices
