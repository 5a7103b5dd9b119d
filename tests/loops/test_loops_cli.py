"""``flamefuse fuse`` end to end: a cold run runs the loop as written while the background
compiler builds its library; the warm run loads it (no Numba) and gives NumPy's bits; the plain
NumPy mode compiles loops too."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = '''
import json
import sys

import numpy as np


def kernel(r):
    n = r.shape[0]
    y = np.zeros(n)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(r[k - 1::-1], y[:k])) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha
    return y


if __name__ == "__main__":
    n = int(sys.argv[2])
    y = kernel(0.5 ** np.arange(1, n + 1) + 1e-3 * np.cos(np.arange(n)))
    np.save(sys.argv[1], y)
    with open(sys.argv[1] + ".json", "w") as fh:
        json.dump({"numba": "numba" in sys.modules}, fh)
'''


def _env(cache: Path) -> dict:
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(cache), FLAMEFUSE_COMPILE="background",
               FLAMEFUSE_NATIVE="1", FLAMEFUSE_ADAPT="0", PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    env.pop("FLAMEFUSE_LOOPS", None)
    return env


def _fuse(script, out, env):
    done = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--explain", str(script), str(out), "700"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stderr, json.loads(Path(str(out) + ".json").read_text())


def test_cold_run_as_written_then_warm_run_compiled_without_numba(tmp_path):
    script = tmp_path / "durbin_like.py"
    script.write_text(SCRIPT)
    subprocess.run([sys.executable, str(script), str(tmp_path / "numpy.npy"), "700"], check=True, timeout=300,
                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    want = np.load(tmp_path / "numpy.npy")
    env = _env(tmp_path / "cache")
    err, cold = _fuse(script, tmp_path / "cold.npy", env)
    assert "loop kernel() line 14: compiled 0 calls; as written 1: compiling in the background" in err, err
    assert not cold["numba"]
    assert np.load(tmp_path / "cold.npy").tobytes() == want.tobytes()
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom flamefuse.runtime import compiler\n"
                           "sys.exit(0 if compiler.wait(600) else 1)"], env=env, timeout=700)
    assert done.returncode == 0
    err, warm = _fuse(script, tmp_path / "warm.npy", env)
    assert "loop kernel() line 14: compiled 1 calls" in err, err
    assert "1 calls ran compiled, 0 as written" in err
    assert not warm["numba"], "a warm run imported Numba"
    assert np.load(tmp_path / "warm.npy").tobytes() == want.tobytes()


def test_plain_numpy_mode_compiles_loops_too(tmp_path, monkeypatch, capsys):
    from flamefuse.cli.fuse import compile_script, run_script
    from flamefuse.loops import guard
    script = tmp_path / "durbin_like.py"
    script.write_text(SCRIPT)
    out = tmp_path / "plain.npy"
    monkeypatch.setattr(sys, "argv", [str(script)])
    run_script(script, compile_script(script), [str(out), "50"], fused=False)
    assert sum(s.compiled for s in guard.STATE.values()) == 1
    ref = {"__name__": "ref"}
    exec(SCRIPT, ref)
    assert np.load(out).tobytes() == ref["kernel"](0.5 ** np.arange(1, 51) + 1e-3 * np.cos(np.arange(50))).tobytes()


@pytest.mark.parametrize("loops", ["1", "0"])
def test_the_script_is_compiled_with_its_own_future_imports_only(tmp_path, monkeypatch, loops):
    # flamefuse's modules use `from __future__ import annotations`; compile() inherits it unless
    # told not to, and the script's annotations would become strings
    from flamefuse.cli.fuse import compile_script
    monkeypatch.setenv("FLAMEFUSE_LOOPS", loops)
    script = tmp_path / "annotated.py"
    script.write_text("def f(x: int, n: float):\n    for i in range(n):\n        x[i] = 1.0\n")
    ns = {"__name__": "annotated"}
    exec(compile_script(script), ns)
    assert ns["f"].__annotations__ == {"x": int, "n": float}
