"""Scripts whose threads do array math run under ``flamefuse fuse`` with NumPy's results: the
recorder, the buffer pool and the kernel modules are safe to enter from several threads."""
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.lazy import recorder
from flamefuse.runtime import pool

ROOT = str(Path(__file__).resolve().parents[2])

SCRIPT = '''
import hashlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
import numpy as np

def work(k):
    x = np.arange(120000.0) + k
    for _ in range(12):
        y = np.sin(x) * 2.0 + x * x
        x = np.sqrt(np.abs((y - 1.0) / (3.0 + k)))
    x = np.asarray(x)
    return hashlib.sha256(x.tobytes()).hexdigest(), float(x.sum()), float(x.max())

results = [None] * 4
def run(k):
    results[k] = work(k)
threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with ThreadPoolExecutor(4) as ex:
    results += list(ex.map(work, range(4)))
for r in results:
    print(*r)
'''


def _rows(stdout):
    return [line.split() for line in stdout.splitlines()]


def test_threads_doing_array_math_get_numpys_results(tmp_path):
    """Four threads, then a pool of four, each running a loop of fused element-wise work and
    reductions: before the recorder's lock, Numba's workqueue aborted the process ("concurrent
    access") or a thread found a kernel module half-loaded."""
    script = tmp_path / "threads.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               FLAMEFUSE_NATIVE="0")
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=True, env=env).stdout
    got = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                         capture_output=True, text=True, env=env, timeout=900)
    assert got.returncode == 0, got.stderr[-3000:]
    rows, want_rows = _rows(got.stdout), _rows(want)
    assert len(rows) == len(want_rows) == 8
    for (digest, total, top), (w_digest, w_total, w_top) in zip(rows, want_rows):
        assert digest == w_digest and top == w_top           # element-wise: bit for bit
        assert float(total) == pytest.approx(float(w_total), rel=1e-12)


def test_a_flush_keeps_its_bases_pending_until_its_kernels_have_run(monkeypatch, interpreted):
    """While one thread's flush runs, another thread sees the bases it computes as pending (not
    as computed with stale or missing data), and its own flush waits for the first."""
    started, go = threading.Event(), threading.Event()
    real = recorder._run_fused

    def slow(*args, **kwargs):
        started.set()
        go.wait(30)
        return real(*args, **kwargs)
    monkeypatch.setattr(recorder, "_run_fused", slow)
    a = lazy.arange(8.0)
    b = a * 2.0 + 1.0                       # recorded, pending
    flusher = threading.Thread(target=lazy.flush)
    flusher.start()
    assert started.wait(30)
    seen = [recorder.RECORDER.concrete(b._base), id(b._base) in recorder.RECORDER.touched]
    reader = threading.Thread(target=lambda: seen.append(numpy.asarray(b).tolist()))
    reader.start()
    reader.join(0.2)
    go.set()
    flusher.join(30)
    reader.join(30)
    assert seen[:2] == [False, True]
    assert seen[2] == (numpy.arange(8.0) * 2.0 + 1.0).tolist()
    assert not recorder.RECORDER.touched


def test_the_pool_never_waits_in_give():
    """``give`` runs from ``__del__`` in any thread, even inside ``take``: while the pool's lock is
    held it leaves the buffer alone instead of waiting (or changing the pool under ``take``)."""
    buf = numpy.empty(pool.MIN_BYTES // 8, numpy.float64)
    before = dict(pool._FREE)
    with pool._LOCK:
        pool.give(buf)                      # would deadlock if it waited for the lock
    assert pool._FREE == before
    del buf


def test_a_kernel_module_is_never_seen_half_loaded(monkeypatch, tmp_path):
    """Two threads load one generated module: the second waits for the first instead of
    getting the module registered but not yet run (``no attribute 'kernel'``)."""
    import builtins

    from flamefuse.cache import _usable, load_module
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    _usable.cache_clear()
    started, go = threading.Event(), threading.Event()
    monkeypatch.setattr(builtins, "_flamefuse_test_events", (started, go), raising=False)
    source = ("import builtins\nstarted, go = builtins._flamefuse_test_events\nstarted.set()\n"
              "go.wait(30)\nkernel = 42\n")
    name = f"ff_test_half_loaded_{os.getpid()}"
    seen = []

    def load():
        module, _ = load_module("kernels", name, source)
        seen.append(getattr(module, "kernel", None))
    first = threading.Thread(target=load)
    first.start()
    assert started.wait(30)
    second = threading.Thread(target=load)
    second.start()
    second.join(0.3)                        # returned already if it did not wait
    go.set()
    first.join(30)
    second.join(30)
    sys.modules.pop(name, None)
    _usable.cache_clear()
    assert seen == [42, 42]
