"""Loops at module level (flamefuse.loops.scope): compiled, and every global they assign left as
Python leaves it (values and types, loop variables of loops that ran zero times unbound or at
their earlier value, the last iteration's temporaries), or refused / run as written where the
difference could be seen."""
import ast

import numpy as np
import pytest

pytest.importorskip("numba")

from flamefuse.loops import guard, rewrite  # noqa: E402
from flamefuse.loops.extract import sites  # noqa: E402
from loops_helpers import calls, declined, run_module as run, same_globals  # noqa: E402

def check(source, expect_compiled=True, **extra):
    """The script's globals as written and compiled are the same; the calls compiled."""
    want = run(source, False, **extra)
    got = run(source, True, **extra)
    same_globals(want, got)
    if expect_compiled:
        assert calls()[0] >= 1, (guard.explain(), declined())
    return want, got


NEST = '''
import numpy as np
n = N
x = np.arange(1.0, n + 1)
A = np.ones((n, n)) * 0.5 + np.eye(n)
k = "before"
for i in range(1, n):
    x[i] = x[i] - 0.5 * x[i - 1]
    for j in range(i + 1, n):
        A[i, j] = A[i, j] - x[j] * A[j, i]
for k in range(n - 1, -1, -1):
    x[k] = (x[k] - A[k, k + 1:] @ x[k + 1:]) / A[k, k]
for q in range(n, n):
    x[0] = 1.0
total = float(x.sum())
'''


@pytest.mark.parametrize("n", [0, 1, 2, 3, 9, 40])
def test_a_nest_and_a_back_substitution_at_module_level(n):
    _, got = check(NEST.replace("N", str(n)), expect_compiled=n >= 1)
    assert "q" not in got                      # a loop of zero iterations binds nothing
    assert declined()["its range is empty"] == {0: 3, 1: 2}.get(n, 1)
    if n == 0:
        assert got["k"] == "before"            # ... and leaves the earlier value
    if n >= 3:
        assert got["i"] == n - 1 and got["j"] == n - 1 and got["k"] == 0
        assert calls()[0] == 2, guard.explain()
        assert guard.explain()[:3] == ["loop at module level line 7: compiled 1 calls",
                                       "loop at module level line 11: compiled 1 calls",
                                       "loop at module level line 13: compiled 0 calls; as written 1: its range is empty"]


TEMPS = '''
import numpy as np
x = np.linspace(-1.0, 2.0, 30)
y = np.zeros(30)
c = 0.25
for i in range(30):
    t = x[i] * 2.0                  # np.float64
    u = c * 3.0                     # a Python float
    m = i + 1                       # a Python int
    s = 0.0
    for j in range(i):
        s += x[j] * t
    y[i] = s + u + m
'''


def test_temporaries_get_their_last_values_and_types():
    want, got = check(TEMPS)
    assert type(got["t"]) is np.float64 and type(got["u"]) is float and type(got["m"]) is int
    assert type(got["s"]) is np.float64 and got["j"] == 28
    assert calls() == (1, 0)


def test_a_temporary_assigned_in_an_inner_loop_that_may_not_run_last():
    source = '''
import numpy as np
x = np.arange(6.0)
for i in range(N):
    for j in range(i, 3):
        s = x[j] * 2.0
        x[j] = s + i
'''
    for n in (4, 6):        # i = n - 1 >= 3: the inner loop does not run in the last iteration
        check(source.replace("N", str(n)), expect_compiled=False)
    assert calls()[0] == 0 and "s may not be assigned in its last iteration" in " ".join(declined())
    for n in (2, 3):        # it runs: compiled, the last iteration as written
        check(source.replace("N", str(n)))


def test_inner_loops_of_a_loop_that_is_not_compiled():
    # gauss.py's shape: a repeat loop with a statement that does not qualify around loops that do
    source = '''
import numpy as np
n = 12
rng = np.random.default_rng(5)
A = rng.standard_normal((n, n)) + n * np.eye(n)
b = rng.standard_normal(n)
for _ in range(3):
    a = np.hstack([A, b[:, None]])
    for k in range(n - 1):
        for r in range(k + 1, n):
            f = a[r, k] / a[k, k]
            for c in range(k, n + 1):
                a[r, c] -= f * a[k, c]
    x = np.zeros(n)
    for k in range(n - 1, -1, -1):
        x[k] = (a[k, n] - a[k, k + 1:n] @ x[k + 1:]) / a[k, k]
'''
    check(source)
    assert calls() == (6, 0), guard.explain()
    lines = guard.explain()
    assert any("line 7: runs as written" in s and "hstack" in s for s in lines), lines


def test_in_the_main_block_and_under_another_name():
    source = '''
import numpy as np
x = np.arange(5.0)
if __name__ == "__main__":
    for i in range(5):
        x[i] = x[i] * x[i]
'''
    check(source)
    assert calls() == (1, 0)
    same_globals(run(source, False, name="lib"), run(source, True, name="lib"))     # (not run: same)


def test_errors_in_the_compiled_part_run_the_loop_as_written():
    source = '''
import numpy as np
x = np.arange(5.0)
i = -7
for i in range(6):
    x[i] = x[i] + 1.0
'''
    for compiled in (False, True):
        with pytest.raises(IndexError, match="index 5 is out of bounds"):
            _run_catching(source, compiled)
    want, got = _run_catching(source, False, keep=True), _run_catching(source, True, keep=True)
    same_globals(want, got)
    assert got["i"] == 5 and calls()[0] == 0 and "the compiled loop raised" in " ".join(declined())


def _run_catching(source, compiled, keep=False):
    ns = {"__name__": "__main__"}
    if compiled:
        code = rewrite.compile_script(source, "<module loops>")
        guard.install(ns)
    else:
        code = compile(source, "<module loops>", "exec")
    if not keep:
        exec(code, ns)
        return ns
    try:
        exec(code, ns)
    except IndexError:
        pass
    return ns


def test_other_locals_than_globals_run_as_written():
    source = '''
import numpy as np
for i in range(4):
    x[i] = x[i] * 3.0
'''
    x = np.arange(4.0)
    want_g, want_l = {"np": np, "x": x.copy()}, {}
    exec(compile(source, "<m>", "exec"), want_g, want_l)
    got_g, got_l = {"np": np, "x": x.copy()}, {}
    code = rewrite.compile_script(source, "<m>")
    guard.install(got_g)
    exec(code, got_g, got_l)
    assert got_l["i"] == want_l["i"] == 3 and "i" not in got_g
    assert got_g["x"].tobytes() == want_g["x"].tobytes()
    assert calls() == (0, 1) and "not the module's globals" in " ".join(declined())


def test_a_range_replaced_at_run_time_is_not_compiled():
    source = '''
import numpy as np
x = np.arange(4.0)
for i in range(4):
    x[i] = x[i] * 3.0
'''
    seen = []

    def my_range(*a):
        seen.append(a)
        return [3, 1]
    builtins_ = {"__builtins__": dict(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__),
                                      range=my_range)}
    want, got = run(source, False, **builtins_), run(source, True, **builtins_)
    same_globals(want, got)
    assert got["i"] == 1 and len(seen) == 2 and calls()[0] == 0
    assert declined() == {"its range() did not give a range": 1}


REFUSED = {
    "class body": ("class C:\n    x = np.zeros(3)\n    for i in range(3):\n        x[i] = 1.0\n", "class body"),
    "exec": ("x = np.zeros(3)\nfor i in range(3):\n    x[i] = 1.0\nexec('y = 1')\n", "exec"),
    "carried": ("x = np.zeros(3)\ns = 1.0\nfor i in range(3):\n    s = s * 2.0\n    x[i] = s\n", "read on entry"),
    "only under an if": ("x = np.zeros(3)\nfor i in range(3):\n    if x[i] > 0:\n        t = 1.0\n"
                         "        x[i] = t\n", "only under an if"),
    "inner loop under an if": ("x = np.zeros(3)\nfor i in range(3):\n    if i > 0:\n        for j in range(i):\n"
                               "            x[j] = 1.0\n", "under an if"),
    "two loops one variable": ("x = np.zeros(3)\nfor i in range(3):\n    for j in range(i):\n        x[j] = 1.0\n"
                               "    for j in range(2):\n        x[j] = 2.0\n", "two loops"),
    "inner range reads a temporary": ("x = np.zeros(3)\nfor i in range(3):\n    m = i + 1\n"
                                      "    for j in range(m):\n        x[j] = 1.0\n", "range of j reads m"),
    "declared global": ("global i\nx = np.zeros(3)\nfor i in range(3):\n    x[i] = 1.0\n", "declared global"),
    "temporary inside try": ("x = np.zeros(3)\ntry:\n    for i in range(3):\n        t = x[i] + 1.0\n"
                             "        x[i] = t\nexcept IndexError:\n    pass\n", "try or with"),
    "reserved name": ("x = np.zeros(3)\n_ff_stop = 1\nfor i in range(3):\n    x[i] = 1.0\n", "_ff_stop"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_module_loops_that_must_stay_as_written(case):
    body, why = REFUSED[case]
    source = "import numpy as np\n" + body
    found = sites(ast.parse(source))
    assert found and found[0].reason is not None and why in found[0].reason, [s.reason for s in found]
    want, got = run(source, False), run(source, True)     # (an inner loop may qualify on its own)
    same_globals(want, got)
    assert 0 not in guard.STATE or guard.STATE[0].compiled == 0
    where = "class C level" if case == "class body" else "module level"
    assert guard.explain()[0].startswith(f"loop at {where} line {found[0].line}: runs as written: "), guard.explain()


def test_loop_variables_only_in_a_try_are_compiled():
    source = '''
import numpy as np
x = np.zeros(4)
try:
    for i in range(4):
        for j in range(i):
            x[i] += x[j] + 1.0
except IndexError:
    pass
'''
    check(source)
    assert calls() == (1, 0)


def test_a_long_search_for_a_final_value_runs_as_written():
    source = '''
import numpy as np
x = np.zeros(3)
for i in range(5000):
    for j in range(i, 3):
        x[j] = x[j] + 1.0
'''
    check(source, expect_compiled=False)
    assert "final values take over" in " ".join(declined())


SCRIPT = '''
import sys
import numpy as np
n = int(sys.argv[2])
rng = np.random.default_rng(0)
M = rng.random((n, n))
A = M @ M.T + n * np.eye(n)
L = np.zeros((n, n))
for i in range(n):
    for j in range(i):
        s = A[i, j] - np.dot(L[i, :j], L[j, :j])
        L[i, j] = s / L[j, j]
    d = A[i, i] - np.dot(L[i, :i], L[i, :i])
    L[i, i] = np.sqrt(d)
np.save(sys.argv[1], np.concatenate([L.ravel(), [s, d, i, j]]))
with open(sys.argv[1] + ".txt", "w") as fh:
    fh.write(repr((s, d, i, j)))
'''


@pytest.mark.parametrize("fused", [False, True])
def test_a_script_run_by_flamefuse_fuse(tmp_path, monkeypatch, fused):
    """A module-level Cholesky (flamefuse fuse's plain-NumPy and fused modes: lazy arrays),
    its temporaries' last values and types as under python."""
    import sys
    from flamefuse.cli.fuse import compile_script, run_script
    script = tmp_path / "chol.py"
    script.write_text(SCRIPT)
    monkeypatch.setattr(sys, "argv", [str(script)])
    run_script(script, compile_script(script), [str(tmp_path / "ff.npy"), "40"], fused=fused)
    assert calls() == (1, 0), guard.explain()
    ns = {"__name__": "__main__"}
    monkeypatch.setattr(sys, "argv", [str(script), str(tmp_path / "np.npy"), "40"])
    exec(compile(SCRIPT, str(script), "exec"), ns)
    assert np.load(tmp_path / "ff.npy").tobytes() == np.load(tmp_path / "np.npy").tobytes()
    assert (tmp_path / "ff.npy.txt").read_text() == (tmp_path / "np.npy.txt").read_text()
    assert "np.float64" in (tmp_path / "np.npy.txt").read_text()
