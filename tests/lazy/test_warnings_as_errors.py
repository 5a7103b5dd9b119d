"""NumPy's ``RuntimeWarning`` under warning filters that raise it, and the script's own warnings
among NumPy's, as under plain NumPy.

* A filter that turns a ``RuntimeWarning`` into an error (``python -W error``,
  ``warnings.simplefilter("error")``) makes NumPy raise it at the operation's line, inside the
  script's ``try``; a recorded operation raised it at the next sync point instead (the end of
  the ``catch_warnings`` block, the next print), past the ``except`` and with the work of the
  lines before it lost. While such a filter is in the list, operations run at once
  (:func:`flamefuse.lazy.eager.warnings_raise`), as under ``np.seterr(all="raise")``.
  A boolean selection (``1.0 / d[k]``) too: it raised nothing under ``np.errstate(divide="raise")``.
* ``warnings.warn`` of a fused script's own ``warnings`` module runs the pending operations
  first: its warning came before NumPy's warnings of the lines above it (in a
  ``record=True`` list and on stderr).
* An error state or filter changed by a library (the real NumPy and ``warnings``, no sync
  point) applies to the operations recorded after it only (:mod:`flamefuse.lazy.pending_state`).
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import flamefuse.lazy as lnp
from flamefuse.lazy import fpstate
from flamefuse.lazy.recorder import RECORDER


@pytest.fixture
def recorded(monkeypatch):
    monkeypatch.setattr(RECORDER, "eager_below", 0)
    lnp.flush()
    yield
    lnp.flush()


def test_a_filter_raising_runtime_warnings_raises_at_the_operations_line(recorded):
    x = lnp.asarray(np.linspace(-1.0, 1.0, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = x * 2.0
        with pytest.raises(RuntimeWarning, match="invalid value encountered in sqrt"):
            lnp.sqrt(x)
        e = d + 1.0
    assert np.asarray(e).tobytes() == (np.linspace(-1.0, 1.0, 9) * 2.0 + 1.0).tobytes()


def test_a_filter_for_another_category_still_records(recorded):
    x = lnp.asarray(np.linspace(-1.0, 1.0, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        y = x * 2.0
        assert RECORDER.ops                     # recorded: no filter raises a RuntimeWarning
    assert float(y[8]) == 2.0


SCRIPT = """\
import warnings
import numpy as np
x = np.linspace(-1, 1, 100000)
d = x * 2
try:
    c = np.sqrt(x)
except RuntimeWarning as ex:
    print("caught", ex)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    try:
        c = np.log(x)
    except RuntimeWarning as ex:
        print("caught", ex)
    e = d + 1
print(float(d[1]), float(e[-1]))
"""


def test_fuse_under_w_error_raises_where_numpy_does(tmp_path):
    script = tmp_path / "werror.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"))
    plain = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True,
                           text=True, env=env)
    fused = subprocess.run([sys.executable, "-W", "error", "-m", "flamefuse.cli", "fuse", "--no-adapt",
                            str(script)], capture_output=True, text=True, env=env)
    assert plain.returncode == fused.returncode == 0, fused.stderr
    assert plain.stdout.count("caught") == 2
    assert fused.stdout == plain.stdout


def _helper(wm):
    wm.warn("from a helper", UserWarning, stacklevel=2)


def test_the_scripts_warn_comes_after_numpys_warnings_of_the_lines_before(recorded):
    wm = fpstate.warnings_module()
    x = lnp.asarray(np.zeros(9))
    with wm.catch_warnings(record=True) as caught:
        wm.simplefilter("always")
        y = 1.0 / x; line = sys._getframe().f_lineno               # noqa: E702
        wm.warn("mine"); line2 = sys._getframe().f_lineno          # noqa: E702
        z = lnp.log(x); line3 = sys._getframe().f_lineno           # noqa: E702
        _helper(wm); line4 = sys._getframe().f_lineno              # noqa: E702
        wm.warn_explicit("explicit", UserWarning, "somewhere.py", 7)
    assert float(y[0]) == np.inf and float(z[0]) == -np.inf
    got = [(w.filename, w.lineno, str(w.message)) for w in caught]
    assert got == [(__file__, line, "divide by zero encountered in divide"),
                   (__file__, line2, "mine"),
                   (__file__, line3, "divide by zero encountered in log"),
                   (__file__, line4, "from a helper"),
                   ("somewhere.py", 7, "explicit")]


def test_a_masked_selection_under_a_raising_state_raises_at_its_line(recorded):
    """``1.0 / d[k]`` (a boolean selection's recorded ufunc) under ``np.errstate(divide="raise")``
    gave ``inf`` and raised nothing, at its line or later; under a raising warning filter too."""
    d = lnp.asarray(np.zeros(16))
    k = d >= 0
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            1.0 / d[k]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in log"):
            lnp.log(d[k])
    assert float((1.0 / d[k]).sum()) == np.inf      # (warns, as NumPy's)


def test_a_state_changed_behind_flamefuses_back_applies_to_later_ops_only(recorded):
    """A library's ``numpy.seterr(all="raise")`` or ``warnings.simplefilter("error")`` (the real
    NumPy and ``warnings``: no sync point) changed how the ops recorded before it warned: the
    flush after it lost the ``divide by zero`` warning under ``raise`` and raised the ``log``'s
    under ``error``, where NumPy had warned at their lines
    (:mod:`flamefuse.lazy.pending_state`)."""
    x = lnp.asarray(np.zeros(16))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = 1.0 / x; line = sys._getframe().f_lineno          # noqa: E702
        old = np.seterr(all="raise")
        try:
            v = float(y[0])
            lnp.log(x)                          # (at once, under raise: raises)
        except FloatingPointError as e:
            raised = str(e)
        finally:
            np.seterr(**old)
        w = lnp.log(x); line3 = sys._getframe().f_lineno      # noqa: E702
        warnings.simplefilter("error")
        v2 = float(w[0])
    assert v == np.inf and v2 == -np.inf and raised == "divide by zero encountered in log"
    got = [(m.lineno, str(m.message)) for m in caught]
    assert got == [(line, "divide by zero encountered in divide"), (line3, "divide by zero encountered in log")]
