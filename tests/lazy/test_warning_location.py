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


def test_fuse_warns_at_the_scripts_lines_as_numpy_does(tmp_path):
    script = tmp_path / "warns.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"))
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, check=True)
    fused = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt",
                            str(script)], capture_output=True, text=True, env=env, check=True)
    assert fused.stdout == plain.stdout
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
