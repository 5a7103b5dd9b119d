"""Every kind of bad input gives one clear message, exit code 2, no traceback, no output."""
import subprocess
import sys

import pytest

from flamefuse.cli import main

GOOD_OPERANDS = "operands:\n  A: {kind: matrix, structure: symmetric}\n"

CASES = [
    # (file name, content, expected location prefix, expected words)
    ("syntax.txt", "[[op_eq(tilde(a), f(hat(a))) eq(tilde(b), hat(a))]].", "syntax.txt:1:30", "expected ',' or ']'"),
    ("nodot.txt", "[[op_eq(tilde(a), f(hat(a)))]]", "nodot.txt:1:31", "expected '.'"),
    ("badchar.txt", "[[op_eq(tilde(a), f(hat(a)) + 1)]].", "badchar.txt:1:29", "unexpected character '+'"),
    ("anyout.txt", "[[op_eq(any([tilde(a)]), f(hat(a)))]].", "anyout.txt:1:9", "any(...) cannot be an output"),
    ("twice.txt", "[[op_eq(tilde(a), f(hat(a))),\n  eq(tilde(a), g(hat(a)))]].", "twice.txt:2:6",
     "two tasks write tilde(a)"),
    ("state.txt", "[[op_eq(tilde(a), f(during(a)))]].", "state.txt:1:21", "unknown state form during(a)"),
    ("state2.txt", "[[op_eq(tilde(a), f(hat(a, b)))]].", "state2.txt:1:21", "unknown state form hat(a,b)"),
    ("output.txt", "[[op_eq(f(a), hat(a))]].", "output.txt:1:9", "must be a base state"),
    ("emptyany.txt", "[[op_eq(tilde(a), f(any([])))]].", "emptyany.txt:1:21", "empty any"),
    ("noop.txt", "[[eq(tilde(a), f(hat(a)))]].", "noop.txt:1:6", "has no op_eq task"),
    ("const.txt", "[[const(hat(a))]].", "const.txt:1:3", "const tasks are added automatically"),
    ("freevar.txt", "[[op_eq(tilde(b), f(X))]].", "freevar.txt:1:21", "free variable 'X'"),
    ("freevar2.txt", "[[op_eq(tilde(b), f(hat(b))),\n  eq(during(b,0), g(hat(_r)))]].", "freevar2.txt:2:25",
     "free variable '_r'"),
    ("freevar3.txt", "[[op_eq(tilde(b), f(hat(Region)))]].", "freevar3.txt:1:25", "free variable 'Region'"),
    ("notask.txt", "[[foo(tilde(a), hat(a))]].", "notask.txt:1:3", "expected a task"),
    ("unknownop.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - op: cholesky\n    A: A\n",
     "unknownop.yaml:5:9", "unknown library operation 'cholesky'"),
    ("unknownoperand.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - op: chol\n    A: M\n",
     "unknownoperand.yaml:6:8", "unknown operand 'M'"),
    ("unknownformal.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - op: chol\n    L: A\n",
     "unknownformal.yaml:6:5", "chol has no operand 'L'"),
    ("unknownregion.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - tasks:\n      - op A_TR~ = chol(A_TL)\n",
     "unknownregion.yaml:6:12", "unknown region A_TR"),
    ("taskany.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - tasks:\n      - op any(A_TL) = chol(A_TL)\n",
     "taskany.yaml:6:12", "any(...) cannot be an output"),
    ("tasksyntax.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - tasks:\n      - op A_TL~ = chol(A_TL\n",
     "tasksyntax.yaml:6:29", "expected ')'"),
    ("yamlsyntax.yaml", "name: x\noperations: [\n", "yamlsyntax.yaml:3:1", "invalid YAML"),
    ("yamltype.yaml", "name: x\n" + GOOD_OPERANDS + "operations: {op: chol}\n", "yamltype.yaml:4:13",
     "operations must be a non-empty list"),
    ("operandtype.yaml", "name: x\noperands:\n  A: [matrix]\noperations:\n  - op: chol\n    A: A\n",
     "operandtype.yaml:3:6", "operand A must be a mapping"),
    ("badstructure.yaml", "name: x\noperands:\n  A: {structure: banded}\noperations:\n  - op: chol\n    A: A\n",
     "badstructure.yaml:3:18", "structure of operand A is 'banded'"),
    ("mismatch.yaml", "name: x\noperands:\n  A: {structure: upper}\noperations:\n  - op: chol\n    A: A\n",
     "mismatch.yaml:6:8", "needs lower or symmetric"),
    ("noname.yaml", "operations:\n  - op: chol\n    A: A\n", "noname.yaml:1:1", "the spec has no 'name'"),
    ("empty.yaml", "", "empty.yaml", "the spec is empty"),
    ("yamlnoop.yaml", "name: x\n" + GOOD_OPERANDS + "operations:\n  - tasks:\n      - A_TL~ = chol(A_TL)\n",
     "yamlnoop.yaml:6:9", "has no op_eq task"),
]


@pytest.mark.parametrize("name,content,where,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_message(tmp_path, capsys, name, content, where, words):
    path = tmp_path / name
    path.write_text(content)
    assert main(["derive", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(str(tmp_path / where)), err
    assert words in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_missing_file(capsys):
    assert main(["derive", "no/such/spec.yaml"]) == 2
    assert "no such file: no/such/spec.yaml" in capsys.readouterr().err


def test_real_process_exit_code_and_no_traceback(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("[[eq(tilde(a), f(hat(a)))]].")
    proc = subprocess.run([sys.executable, "-m", "flamefuse.cli", "derive", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "has no op_eq task" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
