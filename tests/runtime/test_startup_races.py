"""No start-up work of ``flamefuse fuse`` races the script: Numba is imported and set up in the
main thread before any thread that uses it starts (two threads importing or setting it up at
once deadlocked, or got a half-initialised ``numba.core.compiler_lock``)."""
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy
import pytest

from flamefuse import sigcodes
from flamefuse.runtime import native, preload

ROOT = str(Path(__file__).resolve().parents[2])
# the script: its first kernel compiles while the start-up thread sets Numba up
SCRIPT = ("import numpy as np\nx = np.arange(200000.0)\ny = np.sin(x) * 2.0 + x * x\n"
          "z = (y - 1.0) / 3.0\nprint(float(z.sum()))\n")
X = numpy.arange(200000.0)
WANT = float(((numpy.sin(X) * 2.0 + X * X - 1.0) / 3.0).sum())


def _runs(script, env, count, parallel=2):
    """``count`` runs of ``flamefuse fuse script``, ``parallel`` at a time, each with a time limit
    (a hang is a failure, not a stuck test)."""
    results = []
    for start in range(0, count, parallel):
        procs = [subprocess.Popen([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(min(parallel, count - start))]
        for p in procs:
            try:
                out, err = p.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                err = "TIMED OUT (hang)\n" + err
            results.append((p.returncode, out, err))
    return results


def _check(results):
    for status, out, err in results:
        assert status == 0, err[-3000:]
        assert float(out) == pytest.approx(WANT, rel=1e-12)


def test_an_unusable_cache_folder_never_hangs(tmp_path):
    """``FLAMEFUSE_CACHE_DIR=/dev/null/x``: no disk cache, so no kernel list; the start-up
    thread used to set Numba up while the script's first kernel compiled (3-4 runs of 8
    hung: the compiler lock and the target context's lock taken in opposite orders)."""
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT, FLAMEFUSE_CACHE_DIR="/dev/null/x",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_NATIVE="1")
    _check(_runs(script, env, 8))


def test_warm_runs_through_numba_never_fail_at_start_up(tmp_path):
    """A warm cache with ``FLAMEFUSE_NATIVE=0``: the kernel list asks for Numba at start-up while
    the script's first kernel needs it too (3 runs in 46 failed with ``cannot import name
    'global_compiler_lock' from partially initialized module``)."""
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_NATIVE="0")
    _check(_runs(script, env, 1))           # cold: the kernel list is written
    results = _runs(script, env, 8)
    _check(results)
    assert all("kernels loaded at start-up" in err for _, _, err in results)


@pytest.fixture
def listed(monkeypatch, tmp_path):
    """A script whose kernel list names one kernel with no native library."""
    from flamefuse.cache import _usable
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLAMEFUSE_PRELOAD", "1")
    monkeypatch.setattr(preload, "_SEEN", {})
    _usable.cache_clear()
    script = tmp_path / "script.py"
    script.write_text("print('hello')\n")
    source = ("from numba import njit\n@njit(cache=True)\ndef kernel(a0, s0):\n"
              "    for i in range(a0.shape[0]):\n        a0[i] = a0[i] + s0\n")
    preload.record(source, sigcodes.signature((numpy.ones(4), numpy.float64(1.0))))
    preload.save(script)
    yield script
    _usable.cache_clear()


def test_numba_is_set_up_in_the_calling_thread_before_the_loading_thread_starts(listed):
    calls, done = [], threading.Event()

    def set_up():
        calls.append((threading.current_thread(), threading.active_count()))
    before = threading.active_count()
    thread = preload.start(preload.kernels(listed), set_up, lambda n: done.set())
    assert done.wait(120)
    assert calls == [(threading.current_thread(), before)]       # here, no thread yet
    assert thread is not None and thread is not threading.current_thread()


def test_no_numba_set_up_without_a_kernel_list_or_when_every_kernel_has_a_library(
        listed, monkeypatch):
    calls = []
    assert preload.start([], lambda: calls.append(1)) is None
    monkeypatch.setattr(native, "built", lambda source, sig: True)
    thread = preload.start(preload.kernels(listed), lambda: calls.append(1))
    thread.join(120)
    assert calls == []
