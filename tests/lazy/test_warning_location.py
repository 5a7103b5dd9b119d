"""NumPy's warnings of the calls ``flamefuse.lazy`` makes at once (small computed operands,
reductions, written elements, fallbacks) name the script's line, as under plain NumPy, and
are shown once per *script* line: a second line that divides by zero warns too
(:mod:`flamefuse.lazy.userline`).

Not covered: a warning NumPy gives inside its own Python wrapper (``np.sum``'s overflow names
``numpy/_core/fromnumeric.py``); flamefuse's dispatch skips the wrapper and names the script's
line."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import flamefuse.lazy as lnp
from flamefuse.lazy.recorder import RECORDER

SCRIPT = """\
import numpy as np
a = np.zeros(3)
b = np.ones(3)
for i in range(2):
    c = b / a
d = b / a
e = np.log(a)
a[0] = np.float64("nan")
f = a.sum() * b
g = b - np.inf
h = g - g
print(float(c[0]), float(d[0]), float(e[0]), float(h[0]))
"""


def _warning_lines(stderr: str) -> list:
    return [line for line in stderr.splitlines() if "Warning" in line and "flamefuse" not in line]


def _run_both(tmp_path, name: str, text: str) -> tuple:
    """``(plain, fused)``: the script ``text`` run by ``python`` and by ``flamefuse fuse
    --no-adapt`` (completed processes), after checking their outputs are the same."""
    script = tmp_path / f"{name}.py"
    script.write_text(text)
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"))
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, check=True)
    fused = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt",
                            str(script)], capture_output=True, text=True, env=env, check=True)
    assert fused.stdout == plain.stdout
    return plain, fused


def test_fuse_warns_at_the_scripts_lines_as_numpy_does(tmp_path):
    plain, fused = _run_both(tmp_path, "warns", SCRIPT)
    expected = _warning_lines(plain.stderr)
    assert len(expected) >= 4
    assert _warning_lines(fused.stderr) == expected


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(RECORDER, "eager_below", 32768)
    return lnp.asarray(np.zeros(4)), lnp.asarray(np.ones(4))


def test_eager_operator_warning_names_this_file_and_line(small):
    a, b = small
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b / a; line = sys._getframe().f_lineno              # noqa: E702
        lnp.sqrt(a - 2.0); line2 = sys._getframe().f_lineno  # noqa: E702
        a += b / a; line3 = sys._getframe().f_lineno        # noqa: E702
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "divide by zero encountered in divide"),
                   (__file__, line2, "invalid value encountered in sqrt"),
                   (__file__, line3, "divide by zero encountered in divide")]


def test_eager_warning_as_error_is_raised_at_this_line(small):
    a, b = small
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning) as info:
            b / a
    assert info.traceback[-1].path == __file__ or str(info.traceback[-1].path) == __file__


# -- a flush's warnings: each at the line that recorded the op that raised it ------------------
# Arrays large enough to be recorded: the ops run at a later line's flush (fused kernels that
# raise a floating-point flag, then NumPy's calls again for NumPy's warnings), and each warning
# still names its own op's line (:mod:`flamefuse.runtime.sites`), not the line that forced the
# flush -- and two lines warning in one flush warn twice, as under NumPy: a fused flush's (the
# flags raised, NumPy's calls run again into scratch outputs), an in-place flush's (the
# categories named, at the line of the op that raises them), a clustered filter loop's.

FLUSH_SCRIPT = """\
import numpy as np
d = np.zeros(100000)
m = -np.ones(100000)
e = np.ones(100000) / d
f = np.log(d)
for i in range(2):
    g = np.ones(100000) / d
h = np.sqrt(m) + e
print(float(e[0]), float(f[0]), float(g[0]), float(h[0]))
x = np.ones(100000)
print(float(x[0]))
y = 1.0 / d
x += y
print(float(x[0]))
k = d >= 0
p = 1.0 / d[k]
q = np.log(d[k])
print(float(p.sum()), float(q.sum()))
"""


def test_fuse_flush_warns_at_each_ops_line_as_numpy_does(tmp_path):
    plain, fused = _run_both(tmp_path, "flushwarns", FLUSH_SCRIPT)
    expected = _warning_lines(plain.stderr)
    assert [line.split(":")[1] for line in expected] == ["4", "5", "7", "8", "12", "16", "17"]
    assert _warning_lines(fused.stderr) == expected
    assert "recorded 0," not in fused.stderr        # (the ops were recorded, not run at once)


def test_flush_warnings_recorded_at_each_ops_line():
    n = 100000
    assert n >= RECORDER.eager_below
    d, m = lnp.asarray(np.zeros(n)), lnp.asarray(-np.ones(n))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = 1.0 / d; line = sys._getframe().f_lineno            # noqa: E702
        f = lnp.sqrt(m); line2 = sys._getframe().f_lineno       # noqa: E702
        g = lnp.log(d) + f; line3 = sys._getframe().f_lineno    # noqa: E702
        assert RECORDER.ops                     # recorded, not run yet
        values = (float(e[0]), float(g[0]))     # the flush
    assert values[0] == np.inf and np.isnan(values[1])
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "divide by zero encountered in divide"),
                   (__file__, line2, "invalid value encountered in sqrt"),
                   (__file__, line3, "divide by zero encountered in log")]


def test_flush_in_place_names_the_raising_ops_line():
    n = 100000
    d, x = lnp.asarray(np.zeros(n)), lnp.asarray(np.ones(n))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = 1.0 / d; line = sys._getframe().f_lineno            # noqa: E702
        x += y
        value = float(x[0])                     # the flush: x written in place
    assert value == np.inf
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "divide by zero encountered in divide")]


PRODUCT_SCRIPT = """\
import numpy as np
A = np.full((40000, 10), 1e300)
B = np.full((40000, 10), 1e300)
v = np.full(10, 1e300)
y = A @ v
z = B @ v
w = A @ v
print(float(y[0]), float(z[0]), float(w[0]))
u = B @ v
print(float(u[0]))
s = np.full((300, 300), 1e300) @ np.full(300, 1e300)
print(float(s[0]))
"""


def test_fuse_product_warnings_at_each_products_line(tmp_path):
    """A product group run as one loop nest (two products read A), one run as NumPy's gemv, and a
    small product run at once: each ``overflow encountered in matmul`` at its own line."""
    plain, fused = _run_both(tmp_path, "products", PRODUCT_SCRIPT)
    expected = _warning_lines(plain.stderr)
    assert [line.split(":")[1] for line in expected] == ["5", "6", "7", "9", "11"]
    assert _warning_lines(fused.stderr) == expected
    assert "product groups 2 with 4 products" in fused.stderr


SCALAR_SCRIPT = """\
import numpy as np
a = np.log(0.0)
b = np.log(np.float64(0.0))
c = np.arctanh(2.0)
d = np.add(1e308, 1e308)
e = np.multiply(np.float32(1e30), np.float32(1e30))
print(a, b, c, d, e, np.tanh(0.5), np.hypot(3.0, 4))
"""


def test_fuse_scalar_ufunc_calls_warn_at_their_lines(tmp_path):
    """``np.log(0.0)`` on a scalar is NumPy's call with no array in sight; its warning named
    flamefuse/lazy/numpy_api.py, and the second line's was lost (shown once per line)."""
    plain, fused = _run_both(tmp_path, "scalars", SCALAR_SCRIPT)
    expected = _warning_lines(plain.stderr)
    assert len(expected) == 5
    assert _warning_lines(fused.stderr) == expected


def test_zero_d_array_operators_warn_as_numpys_arrays(small):
    """``np.array(1e308) * 10`` is an array's operator under NumPy (``overflow encountered in
    multiply``; ``** 0.5`` its square root): the eager path made the 0-d array a NumPy scalar,
    whose operators warn ``scalar multiply``, ``scalar power``."""
    def run(np_):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = [np_.array(1e308) * 10, 10 * np_.array(1e308), np_.array(-1.0) ** 0.5,
                 np_.array(3) // 0, np_.array(1e308) * np_.array(10.0)]
        return [(type(np.asarray(v)[()]), np.asarray(v).tobytes()) for v in r], \
            [str(w.message) for w in caught]
    got, want = run(lnp), run(np)
    assert want[1] == ["overflow encountered in multiply", "overflow encountered in multiply",
                       "invalid value encountered in sqrt", "divide by zero encountered in floor_divide",
                       "overflow encountered in multiply"]
    assert got == want


def test_eager_run_under_a_raising_error_state_warns_at_this_line(monkeypatch):
    """``np.errstate(over="raise")`` runs every operation at once (NumPy's own calls raise);
    a category left at ``warn`` (``divide``) warned from flamefuse/lazy/elementwise.py."""
    monkeypatch.setattr(RECORDER, "eager_below", 0)
    x = lnp.asarray(np.zeros(8))
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="raise"):
        warnings.simplefilter("always")
        y = 1.0 / x; line = sys._getframe().f_lineno          # noqa: E702
        z = np.ones(8) / x; line2 = sys._getframe().f_lineno  # noqa: E702
    assert float(y[0]) == float(z[0]) == np.inf
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "divide by zero encountered in divide"),
                   (__file__, line2, "divide by zero encountered in divide")]


LOOP_SCRIPT = """\
import numpy as np
x = np.zeros(100000)
for i in range(3):
    y = 1.0 / x
    print(float(y[0]))
for i in range(3):
    z = np.log(x) * 2
    print(float(z[1]))
"""


def test_fuse_a_loops_warning_is_shown_once_per_line(tmp_path):
    """NumPy's ``default`` filter shows a line's warning once (the script module's
    ``__warningregistry__``); the flush's NumPy calls were caught by ``catch_warnings``, whose
    filter changes mark every registry stale, so each flush's warning was shown again."""
    plain, fused = _run_both(tmp_path, "loopwarns", LOOP_SCRIPT)
    expected = _warning_lines(plain.stderr)
    assert [line.split(":")[1] for line in expected] == ["4", "7"]
    assert _warning_lines(fused.stderr) == expected
    assert "recorded 0," not in fused.stderr


def test_a_cast_warns_at_its_line_not_at_an_earlier_copys(monkeypatch):
    """A flush that writes an array in place (``x[::7] = nan``) warned once per category, for an
    op that can raise it: the float64 copy, which raises nothing, was named for the cast to int32
    after it (now the cast runs again as NumPy's call; where it cannot, a same-dtype copy is
    never named: ``numpy_program._can_raise``)."""
    monkeypatch.setattr(RECORDER, "eager_below", 0)
    x = lnp.asarray(np.linspace(-3e9, 3e9, 64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x[::7] = np.nan
        a = x.astype(np.int32); line = sys._getframe().f_lineno     # noqa: E702
        value = int(a[0])
    assert value == np.iinfo(np.int32).min
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "invalid value encountered in cast")]


def test_small_array_cast_warns_at_this_line(small):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = lnp.asarray(np.array([np.nan, 1.0])).astype(np.int32); line = sys._getframe().f_lineno  # noqa: E702
    assert int(a[1]) == 1
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "invalid value encountered in cast")]


def test_powers_warn_as_numpys_operator_and_ufunc(monkeypatch):
    """NumPy's ``x ** 2``, ``x ** -1``, ``x ** 0.5`` of floats are its square, reciprocal and sqrt
    (their warnings name them); ``np.power(x, 2)`` and ``x ** 2.0`` are ``power``. Recorded, a
    float ``x ** -1`` warned ``power`` and ``x ** 2.0``, ``np.power(x, 2)`` ``square``."""
    monkeypatch.setattr(RECORDER, "eager_below", 0)

    def run(np_):
        z, big, m = (np_.asarray(np.full(8, v)) for v in (0.0, 1e200, -1.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = [z ** -1, big ** 2, big ** 2.0, np_.power(big, 2), m ** 0.5, np_.power(m, 0.5),
                 big ** 3, z.astype(np.float32) ** -1]
            values = [np.asarray(v).tobytes() for v in r]
        return values, [str(w.message) for w in caught]
    want = run(np)
    assert want[1] == ["divide by zero encountered in reciprocal", "overflow encountered in square",
                       "overflow encountered in power", "overflow encountered in power",
                       "invalid value encountered in sqrt", "invalid value encountered in power",
                       "overflow encountered in power", "divide by zero encountered in reciprocal"]
    assert run(lnp) == want


def test_an_in_place_flush_warns_as_numpy_for_the_ops_it_can_run_again(monkeypatch):
    """A flush that writes an array in place (``x += 1.0``) lost the other ops' inputs only
    where they are written: each op whose inputs are known runs again as NumPy's call. Before,
    each raised category was named once, for the op that could raise the most: ``0.0 / 0``'s
    line warned of a division by zero it never made, and the lines that made one gave nothing."""
    monkeypatch.setattr(RECORDER, "eager_below", 0)

    def run(np_):
        n = 64
        i = np_.asarray(np.arange(n) - n // 2)
        d, x = np_.asarray(np.zeros(n)), np_.asarray(np.ones(n))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a = i.astype(np.float64) / abs(i)
            x += 1.0
            b = i // i
            c = 1.0 / d
            x -= c
            values = [np.asarray(v).tobytes() for v in (a, b, c, x)]
        return values, [(w.lineno, str(w.message)) for w in caught]
    want = run(np)
    assert [m for _, m in want[1]] == ["invalid value encountered in divide",
                                       "divide by zero encountered in floor_divide",
                                       "divide by zero encountered in divide"]
    assert run(lnp) == want
