"""Cold kernels compile in the background (issue 27 item 10, issue 29): ``FLAMEFUSE_COMPILE=background``.

Each test runs a script under ``flamefuse fuse`` in a subprocess with an empty cache folder:
the cold run gives NumPy's results (bitwise for element-wise work: it ran as NumPy's calls),
never imports Numba in the script's process and exits at once; after the background compiler
is waited for, the next run uses the built kernels. A compiler that crashes changes nothing
for the script.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

ELEMENTWISE = r'''
import json, sys
import numpy as np
n = 50000
x = np.linspace(0.0, 1.0, n)
f = np.linspace(-2.0, 3.0, n).astype(np.float32)
k = np.arange(n, dtype=np.int64)
y = np.sin(x) * 2.5 + x ** 2 - np.sqrt(x + 1.0) + x ** 3 + (x + 1.0) ** 0.5
g = f * 2.0 + np.float32(0.5) * f ** 2
r = np.roll(y, 7) + np.roll(y, -3) * 0.5
w = np.where(y > 0.5, y, -y)
m = (k % 7) * 3 - k // 5
y2 = y.reshape(250, 200)
out = {"y": y, "g": g, "r": r, "w": w, "m": m, "cols": y2.sum(axis=0), "rows": y2.max(axis=1),
       "total": np.array([(y * y).sum(), w.max(), g.sum(), float((m > 3).any())])}
np.savez(sys.argv[1], **{key: np.asarray(v) for key, v in out.items()})
stats = {}
if "flamefuse.lazy" in sys.modules:
    import flamefuse.lazy
    stats = flamefuse.lazy.stats()
with open(sys.argv[1] + ".json", "w") as fh:
    json.dump({"numba": "numba" in sys.modules, "native_loads": stats.get("native_loads", 0),
               "deferred": stats.get("background_deferred_flushes", 0),
               "loads": stats.get("loads", 0)}, fh)
'''

SPD = r'''
import json, sys
import numpy as np
n = 64
rng = np.random.default_rng(0)
G = rng.standard_normal((n, n))
A = G @ G.T + n * np.eye(n)
L = np.linalg.cholesky(A)
Li = np.linalg.inv(L)
C = Li.T @ Li
np.save(sys.argv[1], np.asarray(C))
with open(sys.argv[1] + ".json", "w") as fh:
    json.dump({"numba": "numba" in sys.modules}, fh)
'''


def _env(cache: Path, **extra) -> dict:
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(cache), FLAMEFUSE_COMPILE="background",
               FLAMEFUSE_NATIVE="1", FLAMEFUSE_PLAN_CACHE="1", FLAMEFUSE_PRELOAD="1",
               FLAMEFUSE_ADAPT="0", PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    env.pop("FLAMEFUSE_COMPILE_CRASH", None)
    env.update(extra)
    return env


def _fuse(script: Path, out: Path, env: dict, *options) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--explain", *options, str(script), str(out)],
                          env=env, capture_output=True, text=True, timeout=600, cwd=str(script.parent))
    assert done.returncode == 0, done.stderr
    return done, json.loads(Path(str(out) + ".json").read_text())


def _wait(env: dict) -> None:
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom flamefuse.runtime import compiler\n"
                           "sys.exit(0 if compiler.wait(600) else 1)"], env=env, timeout=700)
    assert done.returncode == 0


def _plain(script: Path, out: Path) -> None:
    subprocess.run([sys.executable, str(script), str(out)], check=True, timeout=300,
                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))


def _same(a: Path, b: Path) -> None:
    with np.load(a) as x, np.load(b) as y:
        assert sorted(x.files) == sorted(y.files)
        for key in x.files:
            assert x[key].dtype == y[key].dtype, key
            assert np.array_equal(x[key], y[key]), key       # bitwise: NumPy's own calls


def test_cold_elementwise_runs_as_numpy_then_the_next_run_uses_the_library(tmp_path):
    script = tmp_path / "ew.py"
    script.write_text(ELEMENTWISE)
    env = _env(tmp_path / "cache")
    _plain(script, tmp_path / "numpy.npz")
    done, cold = _fuse(script, tmp_path / "cold.npz", env)
    _same(tmp_path / "numpy.npz", tmp_path / "cold.npz")
    assert not cold["numba"], "a cold background run imported Numba"
    assert cold["deferred"] > 0 and cold["native_loads"] == 0
    assert "compiling in the background" in done.stderr
    _wait(env)
    assert list((tmp_path / "cache" / "native").glob("*.so")), "the worker built no library"
    assert not list((tmp_path / "cache" / "jobs").glob("job-*.json")), "a job was left behind"
    done, warm = _fuse(script, tmp_path / "warm.npz", env)
    assert warm["native_loads"] > 0 and warm["deferred"] == 0 and warm["loads"] == 0
    assert not warm["numba"]
    with np.load(tmp_path / "numpy.npz") as x, np.load(tmp_path / "warm.npz") as y:
        for key in x.files:
            assert np.allclose(x[key], y[key], rtol=1e-5 if key in ("g", "total") else 1e-12, atol=0), key


def test_cold_linear_algebra_chain_runs_as_lapack_calls_then_fused(tmp_path):
    script = tmp_path / "spd.py"
    script.write_text(SPD)
    env = _env(tmp_path / "cache")
    _plain(script, tmp_path / "numpy.npy")
    want = np.load(tmp_path / "numpy.npy")
    done, cold = _fuse(script, tmp_path / "cold.npy", env, "--eager-below", "1024")
    got = np.load(tmp_path / "cold.npy")
    assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max()
    assert not cold["numba"], "a cold background run imported Numba"
    assert "being compiled in the background" in done.stderr
    _wait(env)
    done, _ = _fuse(script, tmp_path / "warm.npy", env, "--eager-below", "1024")
    got = np.load(tmp_path / "warm.npy")
    assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max()
    assert "being compiled in the background" not in done.stderr
    assert " variant " in done.stderr, done.stderr        # a synthesized kernel ran


def test_a_crashing_compiler_changes_nothing_for_the_script(tmp_path):
    script = tmp_path / "ew.py"
    script.write_text(ELEMENTWISE)
    env = _env(tmp_path / "cache", FLAMEFUSE_COMPILE_CRASH="1")
    _plain(script, tmp_path / "numpy.npz")
    for run in ("first", "second"):
        _, stats = _fuse(script, tmp_path / f"{run}.npz", env)
        _same(tmp_path / "numpy.npz", tmp_path / f"{run}.npz")
        assert not stats["numba"]
        _wait(env)
    assert not list((tmp_path / "cache" / "native").glob("*.so"))
    assert not list((tmp_path / "cache" / "jobs").glob("job-*.json"))


def test_the_test_suite_compiles_inline():
    assert os.environ["FLAMEFUSE_COMPILE"] == "inline"
    from flamefuse.runtime import compiler
    assert not compiler.background()


@pytest.mark.parametrize("value", ["background", ""])
def test_background_is_the_default_for_users(monkeypatch, tmp_path, value):
    monkeypatch.setenv("FLAMEFUSE_COMPILE", value)
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    from flamefuse.runtime import compiler
    assert compiler.background()


CHO_SOLVE = r'''
import json, sys
import numpy
import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl
from flamefuse.runtime import compiler
from flamefuse.synth import direct
n = 200
rng = numpy.random.default_rng(0)
G = rng.standard_normal((n, n))
A = G @ G.T + n * numpy.eye(n)
B = rng.standard_normal((n, 3))
c = sl.cho_factor(np.asarray(A))
outs = [numpy.asarray(sl.cho_solve(c, np.asarray(B)))]
deferred = compiler.STATS["deferred_chains"]
compiler.wait(600)
outs += [numpy.asarray(sl.cho_solve(c, np.asarray(B))) for _ in range(3)]
numpy.save(sys.argv[1], numpy.stack(outs))
with open(sys.argv[1] + ".json", "w") as fh:
    json.dump({"deferred": deferred, "learnt": direct.STATS["learnt"], "hits": direct.STATS["hits"]}, fh)
'''


def test_a_call_run_while_its_kernel_compiles_teaches_no_plan(tmp_path):
    """A lone ``cho_solve`` that ran as LAPACK calls while its chain was being compiled in the
    background must not be remembered as "no plan" (flamefuse.synth.direct): once the answer is
    in (no fused loop), later calls of the key run its LAPACK plan."""
    script = tmp_path / "cho.py"
    script.write_text(CHO_SOLVE)
    env = _env(tmp_path / "cache")
    subprocess.run([sys.executable, str(script), str(tmp_path / "out.npy")], env=env, check=True, timeout=900)
    stats = json.loads((tmp_path / "out.npy.json").read_text())
    outs = np.load(tmp_path / "out.npy")
    assert stats["deferred"] == 1
    assert stats["learnt"] >= 1 and stats["hits"] >= 1, stats
    for out in outs[1:]:
        assert np.array_equal(out, outs[0])


def test_the_numpy_forms_of_the_chain_helpers_give_the_compiled_ones_bits(monkeypatch):
    """Without Numba (a cold background run) the triangle fills, copies and structure checks are
    NumPy's calls: the same values, bit for bit, and the same answers."""
    from flamefuse.synth import fill, structure
    rng = np.random.default_rng(3)
    cases = []
    for n in (1, 2, 7, 65):
        a = np.asfortranarray(rng.standard_normal((n, n)))
        cases += [a, np.ascontiguousarray(a), np.asfortranarray(np.tril(a)), a + a.T,
                  np.asfortranarray(np.where(np.eye(n) > 0, np.nan, a))]
    def outputs(fill_upper, copy_lower, copy_finite, is_lower, is_symmetric):
        out = []
        for a in cases:
            for mirror in (True, False):
                x = a.copy(order="F")
                fill_upper(x, mirror)
                out.append(x)
            d = np.full(a.shape, 7.0, order="F")
            copy_lower(d, a)
            out.append(d)
            d = np.empty(a.shape, order="F")
            out.append(copy_finite(d, a) and d)
            out += [is_lower(a), is_symmetric(a)]
        return out

    expect = outputs(fill._fill_upper, fill._copy_lower, fill._copy_finite, structure._is_lower,
                     structure._is_symmetric)
    monkeypatch.setattr(fill, "_numpy_now", lambda: True)
    monkeypatch.setattr(structure, "_numpy_now", lambda: True)
    got = outputs(fill.fill_upper, fill.copy_lower, fill.copy_finite, structure.is_lower,
                  structure.is_symmetric)
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        if isinstance(e, np.ndarray):
            assert isinstance(g, np.ndarray) and np.array_equal(g, e, equal_nan=True)
            assert np.array_equal(np.signbit(g), np.signbit(e))
        else:
            assert bool(g) == bool(e)


PRODUCTS = r'''
import json, sys
import numpy as np
n = 600     # A (2.9 MB) past the cache size below which a product of computed operands is NumPy's at once
rng = np.random.default_rng(0)
A = rng.standard_normal((n, n)); p = rng.standard_normal(n); r = rng.standard_normal(n)
q = A @ p
s = A.T @ r
np.save(sys.argv[1], np.concatenate([q, s]))
stats = {}
if "flamefuse.lazy" in sys.modules:
    import flamefuse.lazy
    stats = flamefuse.lazy.stats()
with open(sys.argv[1] + ".json", "w") as fh:
    json.dump({"numba": "numba" in sys.modules, "deferred": stats.get("background_deferred_groups", 0),
               "native_loads": stats.get("native_loads", 0)}, fh)
'''


def test_a_cold_product_group_runs_as_numpys_calls_then_as_its_loop_nest(tmp_path):
    script = tmp_path / "mv.py"
    script.write_text(PRODUCTS)
    env = _env(tmp_path / "cache")
    _plain(script, tmp_path / "numpy.npy")
    want = np.load(tmp_path / "numpy.npy")
    _, cold = _fuse(script, tmp_path / "cold.npy", env)
    assert np.array_equal(np.load(tmp_path / "cold.npy"), want)       # NumPy's own products
    assert cold["deferred"] == 1 and not cold["numba"]
    _wait(env)
    _, warm = _fuse(script, tmp_path / "warm.npy", env)
    assert warm["deferred"] == 0 and warm["native_loads"] >= 1 and not warm["numba"]
    assert np.allclose(np.load(tmp_path / "warm.npy"), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


MASKED = r'''
import json, sys, warnings
import numpy as np
n = 100000
rng = np.random.default_rng(1)
x = rng.random(n)
y = rng.random(n) - 0.25
res, top = np.zeros(8), np.zeros(8)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for i in range(8):                      # azimint's bins: a mask, a selection, reductions
        v = y[(x >= i / 8) & (x < (i + 1) / 8)]
        res[i] = np.log(v).sum() + v.mean()
        top[i] = (v * 2.0 + 1.0).max()
    e = y[x > 2.0].mean()                   # an empty selection: NumPy's two warnings
    tot = (x[y > 0.5] * 3.0).sum()
np.savez(sys.argv[1], res=res, top=top, e=np.asarray(e), tot=np.asarray(tot))
stats = {}
if "flamefuse.lazy" in sys.modules:
    import flamefuse.lazy
    stats = flamefuse.lazy.stats()
with open(sys.argv[1] + ".json", "w") as fh:
    json.dump({"numba": "numba" in sys.modules, "deferred": stats.get("background_deferred_loops", 0),
               "warnings": [[w.category.__name__, str(w.message)] for w in caught]}, fh)
'''


def test_a_cold_masked_program_runs_its_filter_loops_as_numpys_calls(tmp_path):
    """Filter loops (boolean masks) whose libraries are not built yet ran through Numba in the
    script's process (1-30 s where NumPy takes 0.1 s): they run as NumPy's calls, with NumPy's
    bits and warnings, and the next run after the compiler uses their libraries."""
    script = tmp_path / "masked.py"
    script.write_text(MASKED)
    env = _env(tmp_path / "cache")
    _plain(script, tmp_path / "numpy.npz")
    want = json.loads((tmp_path / "numpy.npz.json").read_text())
    done, cold = _fuse(script, tmp_path / "cold.npz", env)
    with np.load(tmp_path / "numpy.npz") as x, np.load(tmp_path / "cold.npz") as y:
        for key in x.files:         # bitwise (NaN too): NumPy's own calls
            assert x[key].dtype == y[key].dtype and np.array_equal(x[key], y[key], equal_nan=True), key
    assert not cold["numba"], "a cold background run imported Numba"
    assert cold["deferred"] > 0 and cold["warnings"] == want["warnings"]
    assert "filter loops" in done.stderr
    _wait(env)
    done, warm = _fuse(script, tmp_path / "warm.npz", env)
    assert warm["deferred"] == 0 and not warm["numba"] and warm["warnings"] == want["warnings"]
    with np.load(tmp_path / "numpy.npz") as x, np.load(tmp_path / "warm.npz") as y:
        for key in x.files:
            assert np.allclose(x[key], y[key], rtol=1e-12, atol=0, equal_nan=True), key


RECORDS_WARNINGS = r'''
import warnings
import numpy as np
x = np.linspace(1.0, 2.0, 100000)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    warnings.warn("mine")
    y = x * 2.0 + 1.0
    print(float(y[3]), len(w))
'''


def test_a_worker_still_running_at_exit_prints_nothing(tmp_path):
    """The worker outlives the script; ``Popen.__del__`` at exit warned ``ResourceWarning:
    subprocess N is still running`` under the filter list the script's block left behind
    (Python's own copy once ``warnings`` is gone): a line NumPy's run never prints."""
    script = tmp_path / "rec.py"
    script.write_text(RECORDS_WARNINGS)
    env = _env(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", str(script)],
                          env=env, capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    _wait(env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "3.00006000060000" + "6 1\n"
    assert "compiler processes" in done.stderr and "1 kernels or chains handed to 1" in done.stderr
    assert "ResourceWarning" not in done.stderr and "Exception ignored" not in done.stderr
