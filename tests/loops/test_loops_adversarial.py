"""Hand-written adversarial cases for compiled loops (flamefuse.loops): each run as written and
compiled, compared bit for bit with the same exceptions and warnings (loops_helpers.check).
The first group are regressions (each failed before its fix); the rest probe the edges of the
grammar and of the guard: scoping, rebinding, odd arrays and ints, threads, generators, async,
classes, closures, try/except and partial writes."""
import asyncio
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("numba")

from flamefuse.loops import guard  # noqa: E402
from loops_helpers import calls, check, compiled, declined, plain, same_bits  # noqa: E402

DIV = '''
import numpy as np

def f(x, c, d, n):
    for i in range(n):
        x[i] = c / d
'''


@pytest.mark.parametrize("c", [float("nan"), float("inf"), -float("inf"), 1.0, 0.0])
def test_python_float_division_by_zero_raises_even_where_ieee_gives_no_flag(c):
    # nan / 0.0 and inf / 0.0 raise no IEEE flag, but Python raises ZeroDivisionError
    _, err, _ = check(DIV, lambda: [np.zeros(3)], (c, 0.0, 3))
    assert err[0] == "ZeroDivisionError"


def test_python_int_division_by_zero_and_literal_division():
    source = '''
def f(x, n, k):
    for i in range(n):
        x[i] = i / k + 1.0 / 0.0
'''
    assert check(source, lambda: [np.zeros(3)], (3, 0))[1][0] == "ZeroDivisionError"
    assert check(source, lambda: [np.zeros(3)], (3, 2))[1][0] == "ZeroDivisionError"


DEAD = {
    "a local never read": "        t = x[i] * 1e300\n        x[i] = 1.0",
    "an element stored twice": "        x[i] = 2.0 * x[i]\n        x[i] = 1.0",
    "an if with empty branches": "        if x[i] * 1e300 > 0:\n            pass\n        x[i] = 1.0",
    "a local overwritten": "        t = x[i] - x[i]\n        t = 1.0\n        x[i] = t",
    "a slice stored twice": "        x[0:2] = x[0:2] * 1e300\n        x[0:2] = 0.5",
    "a sqrt never used": "        t = np.sqrt(x[i])\n        x[i] = 1.0",
}


@pytest.mark.parametrize("case", sorted(DEAD))
def test_warnings_of_computations_whose_result_is_unused(case):
    source = f"import numpy as np\n\ndef f(x, n):\n    for i in range(n):\n{DEAD[case]}\n"
    for x in (np.full(3, 1e300), np.full(3, 1e308), np.array([np.inf, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])):
        _, err, warned = check(source, lambda: [x.copy()], (3,))
        assert err is None
    check(source, lambda: [np.array([1.0, 2.0, 3.0])], (3,))
    assert calls()[0] == 1, declined()    # a clean call is still compiled


@pytest.mark.parametrize("k", [np.uint8(0), np.int32(0), np.uint32(0), np.int16(0)])
def test_narrow_numpy_ints_wrap_as_numpy_does(k):
    source = '''
def f(x, k, n):
    for i in range(n):
        x[k - 1] = 1.0 + i
'''
    _, _, warned = check(source, lambda: [np.zeros(300)], (k, 2))
    assert calls()[0] == 0


def test_numpy_function_replaced_by_the_script(monkeypatch):
    source = '''
import numpy as np

def f(x, n):
    for i in range(n):
        x[i] = np.sqrt(x[i]) + np.abs(x[i])
'''
    monkeypatch.setattr(np, "sqrt", lambda v: v * 10.0)
    check(source, lambda: [np.arange(4.0)], (4,))
    assert calls()[0] == 0 and "not NumPy's own" in " ".join(declined())


def test_no_floating_point_flags_on_the_platform(monkeypatch):
    from flamefuse.runtime import fpflags
    monkeypatch.setattr(fpflags, "AVAILABLE", False)
    monkeypatch.setattr(fpflags, "raised", lambda: 0)
    source = "def f(x, n):\n    for i in range(n):\n        x[i] = x[i] * 1e300\n"
    _, _, warned = check(source, lambda: [np.full(3, 1e300)], (3,))
    assert warned and calls()[0] == 0


# -- edges of the grammar and the guard (all held before; they keep it so) ---------------------

def test_loop_variable_shadowing_a_global_leaves_the_global():
    source = '''
i = 100
s = -1.0

def f(x, n):
    for i in range(n):
        s = x[i] * 2.0
        x[i] = s + i

def g():
    return i, s
'''
    check(source, lambda: [np.arange(5.0)], (5,))
    assert calls() == (1, 0)
    ns = compiled(source)
    ns["f"](np.arange(5.0), 5)
    assert ns["g"]() == (100, -1.0)


def test_a_global_changed_between_calls_is_read_at_each_call():
    source = '''
G = 1.0

def f(x, n):
    for i in range(n):
        x[i] = x[i] + G

def set_g(v):
    global G
    G = v
'''
    ref, ours = plain(source), compiled(source)
    a, b = np.zeros(3), np.zeros(3)
    for v in (1.0, 2.5, np.float64(-3.0)):
        ref["set_g"](v), ours["set_g"](v)
        ref["f"](a, 3), ours["f"](b, 3)
    assert same_bits(a, b) and calls()[0] == 3


def test_np_rebound_to_another_module_at_run_time():
    import math
    import types
    source = '''
import numpy as np

def f(x, n):
    for i in range(n):
        x[i] = np.sqrt(x[i])
'''
    fake = types.SimpleNamespace(sqrt=lambda v: math.sqrt(v) + 1.0, abs=abs, dot=np.dot)
    ref, ours = plain(source), compiled(source)
    ref["np"], ours["np"] = fake, fake
    a, b = np.arange(4.0), np.arange(4.0)
    ref["f"](a, 4), ours["f"](b, 4)
    assert same_bits(a, b) and calls()[0] == 0


def test_np_rebound_in_the_script_is_refused():
    source = '''
import numpy as np
import math as np

def f(x, n):
    for i in range(n):
        x[i] = np.sqrt(x[i])
'''
    check(source, lambda: [np.arange(4.0)], (4,))
    assert calls() == (0, 0)


@pytest.mark.parametrize("kind", ["byteswapped", "readonly", "0-d", "float32", "int", "F-order", "strided"])
def test_arrays_the_guard_refuses_still_give_numpys_result(kind):
    source = '''
import numpy as np

def f(x, A, n):
    for i in range(n):
        x[i] = x[i] * 0.5 + np.dot(A[i, :], A[:, i])
'''
    def make():
        x, A = np.arange(1.0, 5.0), np.arange(16.0).reshape(4, 4)
        if kind == "byteswapped":
            x = x.astype(">f8")
        elif kind == "readonly":
            x.flags.writeable = False
        elif kind == "0-d":
            x = np.array(3.0)
        elif kind == "float32":
            A = A.astype(np.float32)
        elif kind == "int":
            x = x.astype(np.int64)
        elif kind == "F-order":
            A = np.asfortranarray(A)
        elif kind == "strided":
            A = np.arange(32.0).reshape(4, 8)[:, ::2]
        return [x, A]
    check(source, make, (4,))
    assert calls()[0] == 0


def test_large_ranges_step_zero_and_index_overflow():
    big = '''
def f(x, n):
    for i in range(1099511627776):
        x[i] = 1.0
'''
    assert check(big, lambda: [np.zeros(5)], (0,))[1][0] == "IndexError"
    for n in (2 ** 31, 2 ** 40):
        assert check("def f(x, n):\n    for i in range(n):\n        x[i] = 1.0\n",
                     lambda: [np.zeros(5)], (n,))[1][0] == "IndexError"
    zero = "def f(x, n):\n    for i in range(0, n, 0):\n        x[i] = 1.0\n"
    assert check(zero, lambda: [np.zeros(5)], (5,))[1][0] == "ValueError"
    over = "def f(x, n):\n    for i in range(n):\n        x[i * 4611686018427387904 * 4] = 1.0\n"
    assert check(over, lambda: [np.zeros(5)], (3,))[1][0] == "IndexError"
    cube = "def f(x, k, n):\n    for i in range(n):\n        x[k * k * k - i] = 1.0\n"
    assert check(cube, lambda: [np.zeros(5)], (2 ** 20, 2))[1][0] == "IndexError"


def test_called_from_several_threads():
    source = '''
import numpy as np

def f(x, y, n):
    for i in range(n):
        for j in range(i):
            x[i] -= np.dot(x[:j], y[:j]) / 7.0
'''
    ref, ours = plain(source)["f"], compiled(source)["f"]
    rng = np.random.default_rng(1)
    ins = [(rng.standard_normal(200), rng.standard_normal(200)) for _ in range(8)]
    want = [x.copy() for x, _ in ins]
    for w, (_, y) in zip(want, ins):
        ref(w, y, 200)
    got = [x.copy() for x, _ in ins]
    start = threading.Barrier(len(ins))

    def go(x, y):
        start.wait()
        ours(x, y, 200)
    threads = [threading.Thread(target=go, args=(g, y)) for g, (_, y) in zip(got, ins)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)         # (threads interleave often: the first calls race)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert all(same_bits(w, g) for w, g in zip(want, got))
    assert sum(calls()) == len(ins)         # every call counted (one state per site, not per thread)


def test_generator_async_method_nested_and_closure():
    source = '''
import numpy as np

def gen(x, n):
    for i in range(n):
        x[i] = x[i] * 2.0 - 1.0
    yield x
    for i in range(n):
        x[i] = -x[i]
    yield x

async def co(x, n):
    for i in range(n):
        x[i] = x[i] + 0.25

class K:
    def m(self, x, n):
        for i in range(n):
            x[i] = abs(x[i] - 3.0)
        return x

def outer(x, n):
    def inner(y):
        for i in range(n):
            y[i] = min(y[i], 2.0)
    inner(x)
    return x

def with_nonlocal(x, n):
    s = 0.0
    def bump():
        nonlocal s
        for i in range(n):
            s = x[i]
            x[i] = s + 1.0
    bump()
    return s

def lambda_default(x, n):
    for i in range(n):
        t = x[i] * 3.0
        x[i] = t
    g = lambda v=x[0]: v
    return g()

def deleted(x, n):
    for i in range(n):
        t = x[i] + 1.0
        x[i] = t
    del x
'''
    def run(ns, x):
        out = [list(ns["gen"](x, 5))[-1].copy()]
        asyncio.run(ns["co"](x, 5))
        out += [x.copy(), ns["K"]().m(x, 5).copy(), ns["outer"](x, 5).copy()]
        out += [ns["with_nonlocal"](x, 5), x.copy(), ns["lambda_default"](x, 5), x.copy()]
        ns["deleted"](x, 5)
        return out + [x.copy()]
    x = np.array([-2.0, 0.5, np.nan, 7.0, -0.0])
    want, got = run(plain(source), x.copy()), run(compiled(source), x.copy())
    assert all(same_bits(w, g) for w, g in zip(want, got))
    reasons = [s.reason for s in guard.SITES]
    assert any("async" in (r or "") for r in reasons) and any("nonlocal" in (r or "") for r in reasons)
    # gen's two loops both compile (its second loop's i is its own: extract._rebound_by_loops);
    # outer's min() of a NaN raises the invalid flag and runs as written
    assert calls() == (5, 1), (calls(), declined())


def test_try_except_around_the_loop_and_partial_writes():
    source = '''
def f(x, y, n):
    try:
        for i in range(n):
            x[i] = y[i] * 2.0
            y[i + 1] = -x[i]
    except IndexError:
        x[0] = 99.0

def g(x, y, n):
    for i in range(n):
        x[i] = y[i] * 2.0
        x[i + 1] = x[i] / y[i]
'''
    make = lambda: [np.arange(1.0, 9.0), np.arange(1.0, 6.0)]       # noqa: E731
    assert check(source, make, (8,))[1] is None
    assert check(source, make, (8,), name="g")[1][0] == "IndexError"
    zeros = lambda: [np.arange(1.0, 9.0), np.array([1.0, 2.0, 0.0, 4.0])]    # noqa: E731
    _, err, warned = check(source, zeros, (4,), name="g")
    assert err is None and warned


def test_a_loop_in_a_numba_jitted_function_or_jitclass_is_left_to_numba():
    pytest.importorskip("numba")
    source = '''
import numpy as np
import numba

@numba.njit
def f(x, n):
    for i in range(n):
        x[i] = x[i] * 2.0 + 1.0

class K:
    @staticmethod
    def g(x, n):
        for i in range(n):
            x[i] = x[i] - 1.0
'''
    check(source, lambda: [np.ones(3)], (3,))
    assert check(source, lambda: [np.ones(3)], (3,), name="f")[1] is None
    ns = compiled(source)
    x = np.ones(3)
    ns["K"].g(x, 3)
    assert calls() == (1, 0) and same_bits(x, np.zeros(3))      # staticmethod: still compiled


def test_scalar_part_of_an_empty_slice_statement_still_warns():
    source = '''
def f(x, c, n):
    for i in range(n):
        x[i:0] = x[i:0] * (c * 1e300)
'''
    _, _, warned = check(source, lambda: [np.ones(3)], (np.float64(1e300), 3))
    assert warned


def test_numpy_error_states_raise_and_underflow_warn():
    source = "def f(x, n):\n    for i in range(n):\n        x[i] = x[i] * 1e-300\n"
    with np.errstate(under="warn"):
        assert check(source, lambda: [np.full(3, 1e-300)], (3,))[2]
    with np.errstate(all="raise"):
        assert check(source, lambda: [np.full(3, 1e-300)], (3,))[1][0] == "FloatingPointError"
        check(source, lambda: [np.ones(3)], (3,))
        assert calls() == (1, 0)


def test_a_name_carried_between_runs_of_a_loop_inside_an_uncompiled_loop():
    # the while loop is never a site; the for loop inside it is, and runs once
    # per outer iteration: c's value after one run is the next run's value on entry
    source = '''
def f(x, y, c, n):
    k = n - 1
    while k > 0:
        for j in range(k):
            c += y[k]
            x[k] = c
        k -= 1
'''
    rng = np.random.default_rng(0)
    y = rng.standard_normal(6)
    check(source, lambda: [np.zeros(6), y.copy()], (1.0, 6))
    assert calls()[0] == 0
