"""``flamefuse fuse SCRIPT`` runs the script as ``python SCRIPT`` does: as the real ``__main__``
module (its functions pickle, so ``multiprocessing`` pools with ``fork``, ``spawn`` and
``forkserver`` run them), with its ``sys.argv``, ``__file__`` and its folder on ``sys.path``."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flamefuse.cli import main

ROOT = str(Path(__file__).resolve().parents[2])

POOL = '''
import multiprocessing as mp
import sys
import numpy as np

def f(k):
    x = np.arange(40000.0) + k
    y = np.sqrt(x) * 2.0 + x
    return float(y.sum()), float(y.max())

if __name__ == "__main__":
    for method in sys.argv[1:]:
        with mp.get_context(method).Pool(2) as pool:
            for total, top in pool.map(f, range(3)):
                print(method, total, top)
'''


def _env(tmp_path):
    return dict(os.environ, PYTHONPATH=ROOT, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
                FLAMEFUSE_NATIVE="0")


@pytest.mark.parametrize("methods", [["fork", "spawn"], ["forkserver"]])
def test_a_pool_runs_functions_defined_in_the_script(tmp_path, methods):
    """Before: ``Can't pickle <function f>: attribute lookup f on __main__ failed``."""
    script = tmp_path / "pool.py"
    script.write_text(POOL)
    env = _env(tmp_path)
    want = subprocess.run([sys.executable, str(script), *methods], capture_output=True,
                          text=True, check=True, env=env).stdout.split("\n")
    got = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script), *methods],
                         capture_output=True, text=True, env=env, timeout=900)
    assert got.returncode == 0, got.stderr[-3000:]
    rows = got.stdout.split("\n")
    assert len(rows) == len(want) == 3 * len(methods) + 1
    for row, w in zip(rows[:-1], want):
        (method, total, top), (w_method, w_total, w_top) = row.split(), w.split()
        assert method == w_method and top == w_top
        assert float(total) == pytest.approx(float(w_total), rel=1e-12)


def test_the_script_is_the_main_module_with_its_argv_file_and_folder(tmp_path, capsys,
                                                                      monkeypatch):
    (tmp_path / "helper_mod_for_fuse.py").write_text("VALUE = 7\n")
    script = tmp_path / "m.py"
    script.write_text(
        "import os, pickle, sys\nimport __main__\nimport helper_mod_for_fuse\n"
        "def f(v):\n    return v + 1\n"
        "class C:\n    pass\n"
        "g = pickle.loads(pickle.dumps(f))\n"
        "print(__name__, __main__ is sys.modules['__main__'], g is f, "
        "type(pickle.loads(pickle.dumps(C()))) is C)\n"
        "print(sys.argv, __file__ == os.path.abspath('m.py'), __main__.__file__ == __file__, "
        "helper_mod_for_fuse.VALUE)\n"
        "import inspect, warnings\n"
        "print(f.__code__.co_filename == __file__, inspect.currentframe().f_code.co_filename == __file__)\n")
    monkeypatch.chdir(tmp_path)
    saved_main, saved_argv, saved_path = sys.modules["__main__"], list(sys.argv), list(sys.path)
    assert main(["fuse", "m.py", "a", "--b"]) == 0
    out = capsys.readouterr().out.splitlines()
    # the code's file name is absolute, as ``python m.py`` makes it (warnings and tracebacks
    # named the script 'm.py', and ``__code__.co_filename`` differed from ``__file__``)
    assert out == ["__main__ True True True", "['m.py', 'a', '--b'] True True 7", "True True"]
    # and everything is given back to the caller afterwards
    assert sys.modules["__main__"] is saved_main and sys.argv == saved_argv
    assert sys.path == saved_path
    sys.modules.pop("helper_mod_for_fuse", None)


def test_the_kernel_list_is_saved_when_the_script_changes_folder(tmp_path, capsys, monkeypatch):
    from flamefuse.cache import _usable
    from flamefuse.runtime import preload
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLAMEFUSE_PRELOAD", "1")
    monkeypatch.setattr(preload, "_SEEN", {})
    _usable.cache_clear()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "c.py").write_text("import os\nimport numpy as np\nos.chdir('elsewhere')\n"
                                   "print(float((np.arange(50000.0) * 2.0).sum()))\n")
    monkeypatch.chdir(tmp_path)
    try:
        assert main(["fuse", "c.py"]) == 0
        monkeypatch.chdir(tmp_path)
        assert preload.kernels(tmp_path / "c.py")
    finally:
        _usable.cache_clear()


def test_the_script_waits_for_its_threads_before_the_summary(tmp_path, capsys):
    script = tmp_path / "t.py"
    script.write_text("import threading, time\nimport numpy as np\n"
                      "def late():\n    time.sleep(0.2)\n"
                      "    print('thread', float((np.arange(50000.0) * 2.0).sum()))\n"
                      "threading.Thread(target=late).start()\nprint('main done')\n")
    assert main(["fuse", str(script)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["main done", f"thread {float(sum(range(50000)) * 2.0)}"]


def test_an_executor_left_open_does_not_keep_the_run_waiting(tmp_path):
    """Idle ``ThreadPoolExecutor`` workers are not waited for (the interpreter stops them at
    exit); waiting for every non-daemon thread would hang here."""
    script = tmp_path / "e.py"
    script.write_text("from concurrent.futures import ThreadPoolExecutor\nimport numpy as np\n"
                      "ex = ThreadPoolExecutor(2)\n"
                      "print(sum(ex.map(lambda k: float((np.arange(50000.0) * k).sum()), range(4))))\n")
    got = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                         capture_output=True, text=True, env=_env(tmp_path), timeout=600)
    assert got.returncode == 0, got.stderr[-3000:]
    assert float(got.stdout) == float(sum(range(50000)) * 6.0)
