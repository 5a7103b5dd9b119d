"""Loops that almost qualify and must stay as written (flamefuse.loops.extract / render): no
compile, the reason kept for --explain, the function's result unchanged."""
import ast

import numpy as np
import pytest

from flamefuse.loops import guard
from flamefuse.loops.extract import sites
from loops_helpers import calls, compiled, plain, same_bits

BASE = '''
import numpy as np
import math

def helper(v):
    return v

def f(x, n):
{body}
    return x
'''

REFUSED = {
    "read after the loop": ("    for i in range(n):\n        t = x[i] * 2\n        x[i] = t\n    x[0] = t", "used outside it"),
    "loop variable after the loop": ("    for i in range(n):\n        x[i] = 1.0\n    x[0] = i", "used outside it"),
    "loop variable read before its loop": ("    for i in range(n):\n        x[i] = j\n        for j in range(2):\n"
                                           "            x[j] = 1.0", "has not set it"),
    "transcendental": ("    for i in range(n):\n        x[i] = np.tanh(x[i])", "np.tanh"),
    "math module": ("    for i in range(n):\n        x[i] = math.exp(x[i])", "math.exp"),
    "integer division": ("    for i in range(n):\n        x[i // 2] = 1.0", "FloorDiv"),
    "modulo": ("    for i in range(n):\n        x[i % 3] = 1.0", "Mod"),
    "power": ("    for i in range(n):\n        x[i] = x[i] ** 2", "Pow"),
    "list append": ("    out = []\n    for i in range(n):\n        out.append(x[i])", "Expr"),
    "user function": ("    for i in range(n):\n        x[i] = helper(x[i])", "helper"),
    "break": ("    for i in range(n):\n        if x[i] > 0:\n            break\n        x[i] = 1.0", "Break"),
    "return inside": ("    for i in range(n):\n        x[i] = 1.0\n        return x", "Return"),
    "while inside": ("    for i in range(n):\n        while x[i] > 1:\n            x[i] = x[i] / 2", "While"),
    "attribute call": ("    for i in range(n):\n        x[i] = x.sum()", "x.sum"),
    "global written": ("    global G\n    for i in range(n):\n        G = x[i]\n        x[i] = G", "global"),
    "no array written": ("    s = 0.0\n    for i in range(n):\n        s += x[i]\n    return s", "used outside"),
    "a loop over a list": ("    for i in [0, 1]:\n        x[i] = 1.0", None),
    "locals()": ("    for i in range(n):\n        x[i] = 1.0\n    print(locals())", "locals"),
    "closure": ("    for i in range(n):\n        x[i] = 1.0\n    g = lambda: i", "used outside"),
    "range step not literal": ("    for i in range(0, n, n // 2 + 1):\n        x[i] = 1.0", "step"),
    "string constant": ("    for i in range(n):\n        x[i] = float('1')", "float"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_almost_matching_loops_stay_as_written(case):
    body, why = REFUSED[case]
    source = BASE.format(body=body)
    found = sites(ast.parse(source))
    assert all(s.reason is not None for s in found), case
    if why is not None:
        assert any(why in s.reason for s in found), [s.reason for s in found]
    ns = compiled(source)
    assert "_ff_loop_args" not in ns["f"].__code__.co_varnames     # compiled unchanged


def test_a_rebound_builtin_or_numpy_is_refused_at_run_time():
    source = BASE.format(body="    for i in range(n):\n        x[i] = abs(x[i])")
    x = np.array([-1.0, 2.0, -3.0])
    ns = compiled(source)
    ns["abs"] = lambda v: v * 10        # a global shadowing the built-in, made at run time
    got = ns["f"](x.copy(), 3)
    assert same_bits(got, x * 10)
    assert calls()[0] == 0 and any("abs is not the built-in" in w for s in guard.STATE.values()
                                   for w in s.declined)


class Sub(np.ndarray):
    pass


def test_types_outside_the_guards_run_as_written():
    source = BASE.format(body="    for i in range(n):\n        x[i] = x[i] * 2")
    ns, ref = compiled(source), plain(source)
    makers = (lambda: np.arange(4), lambda: np.arange(4.0, dtype=np.float32),  # int, float32
              lambda: np.arange(8.0)[::2], lambda: [1.0, 2.0, 3.0, 4.0],      # not contiguous, a list
              lambda: np.arange(4.0).view(Sub))                               # a subclass
    for make in makers:
        assert same_bits(ref["f"](make(), 4), ns["f"](make(), 4))
    with pytest.raises(IndexError):
        ns["f"](np.arange(4.0), 2 ** 40)                # an int past 2**31: NumPy's IndexError
    assert calls() == (0, 6), guard.explain()


def test_flamefuse_loops_0_compiles_the_script_as_written(tmp_path, monkeypatch):
    from flamefuse.cli.fuse import compile_script
    script = tmp_path / "s.py"
    script.write_text(BASE.format(body="    for i in range(n):\n        x[i] = x[i] * 2"))
    def guarded(code):
        f = next(c for c in code.co_consts if getattr(c, "co_name", None) == "f")
        return "_flamefuse_loops" in f.co_names
    assert guarded(compile_script(script))
    monkeypatch.setenv("FLAMEFUSE_LOOPS", "0")
    assert not guarded(compile_script(script))
