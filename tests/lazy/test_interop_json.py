"""flamefuse.lazy.interop: ``json`` encodes a lazy reduction's float result as NumPy's scalar,
whether ``json`` was imported before flamefuse.lazy, after it, or first by another module, and
flamefuse.lazy does not import ``json`` itself (start-up: docs/startup.md)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

AFTER = """
import sys
import numpy
import flamefuse.lazy as lazy
assert "json" not in sys.modules, "flamefuse.lazy imported json"
x = lazy.arange(100_000) * 0.5
s, want = x.sum(), (numpy.arange(100_000) * 0.5).sum()
{importer}
import json
assert json.dumps(s) == json.dumps(want) == json.dumps(float(want))
assert json.dumps({{"m": x.max()}}) == json.dumps({{"m": (numpy.arange(100_000) * 0.5).max()}})
try:
    json.dumps((lazy.arange(100_000) * 1).sum())        # an int64 result: NumPy's TypeError
except TypeError:
    pass
else:
    raise AssertionError("an integer result was encoded")
import importlib
importlib.reload(json)
assert json.dumps(x.sum()) == json.dumps(want)
print("ok", file=sys.stderr)
"""


def _run(text, tmp_path):
    (tmp_path / "other.py").write_text("from json import dumps\n")     # a module importing json first
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_json_imported_after_flamefuse_lazy_encodes_lazy_floats(tmp_path):
    assert "ok" in _run(AFTER.format(importer=""), tmp_path)


def test_json_imported_first_by_another_module(tmp_path):
    assert "ok" in _run(AFTER.format(importer="import other\nassert 'json' in sys.modules"), tmp_path)


def test_json_imported_before_flamefuse_lazy(tmp_path):
    text = "import json\n" + AFTER.replace('assert "json" not in sys.modules, "flamefuse.lazy imported json"\n', "")
    assert "ok" in _run(text.format(importer=""), tmp_path)
