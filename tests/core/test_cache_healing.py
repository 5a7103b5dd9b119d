"""Every cache flamefuse reads survives corruption, unusable folders, kills and concurrency.

Each case runs real processes: a generated kernel module, a flamefuse.lazy
program (runtime kernels), a fused loop nest and a clustered program, all
with their caches in a temporary folder.  A run must print the right result;
a damaged cache gives one warning and is rebuilt.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """
import sys, numpy as np
sys.path.insert(0, {folder!r})
import cholesky
a = np.asfortranarray(np.diag([4.0, 9.0, 16.0, 25.0]))
assert cholesky.DEFAULT(a, block_size=2) == 0
assert np.allclose(np.diag(a), [2, 3, 4, 5]), a
print("ok")
"""

LAZY = """
import flamefuse.lazy as np
x = np.arange(300000, dtype=np.float64)
y = float(((x * 2.0 + 1.0) * 0.5).sum())
assert y == 300000 ** 2 / 2, y
print("ok")
"""

LOOPNEST = """
import numpy as np
from flamefuse.loopnest import fuse_program
from flamefuse.loopnest.kernels import KERNELS
rng = np.random.default_rng(0)
A, p, r = rng.standard_normal((30, 20)), rng.standard_normal(20), rng.standard_normal(30)
out = fuse_program(KERNELS["bicg"][0]())(A=A, p=p, r=r)
print("ok")
"""

CLUSTER = """
import numpy as np
from flamefuse.cluster import compile_program, evaluate, parse_file, cluster
p = parse_file({comb!r})
xs = np.random.default_rng(1).standard_normal(101)
got, want = compile_program(cluster(p)).run({{"xs": xs}}), evaluate(p, {{"xs": xs}})
assert all(np.allclose(got[k], want[k]) for k in p.returns)
print("ok")
"""


def run(code: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
    return done


def environment(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAMEFUSE_", "NUMBA_CACHE"))}
    env.update(FLAMEFUSE_CACHE_DIR=str(tmp / "cache"), NUMBA_CACHE_DIR=str(tmp / "numba"), PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def programs(tmp: Path) -> dict[str, str]:
    folder = tmp / "kernels"
    folder.mkdir(exist_ok=True)
    shutil.copy(ROOT / "generated" / "cholesky.py", folder)
    return {"generated": KERNEL.format(folder=str(folder)), "lazy": LAZY, "loopnest": LOOPNEST,
            "cluster": CLUSTER.format(comb=str(ROOT / "tests" / "data" / "cluster" / "normalize2.comb"))}


def cache_files(tmp: Path) -> list[Path]:
    found = [p for p in tmp.rglob("*") if p.is_file() and (p.suffix in (".nbi", ".nbc") or
             (p.suffix == ".py" and "cache" in p.parts))]
    return sorted(found)


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A folder whose caches the four programs filled, cold, once for the damage cases: each
    case damages every cache file in it and its last runs check that they were rebuilt, so the
    next case starts again from full caches (the same files, written by a rebuild)."""
    tmp = tmp_path_factory.mktemp("filled")
    env, codes = environment(tmp), programs(tmp)
    for code in codes.values():
        run(code, env, tmp)                               # cold: fills every cache
    return tmp, env, codes


@pytest.mark.parametrize("damage", ["truncate", "empty"])
def test_damaged_cache_files_are_rebuilt_with_one_warning(filled, damage):
    tmp, env, codes = filled
    files = cache_files(tmp)
    kinds = {p.suffix for p in files}
    assert {".nbi", ".nbc", ".py"} <= kinds, files
    for p in files:
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"")
    for name, code in codes.items():
        done = run(code, env, tmp)
        warned = done.stderr.count("discarded an unreadable Numba cache entry")
        assert warned <= 1 + (name != "generated") * 2, (name, done.stderr[-2000:])
        if name == "generated":
            assert warned == 1, done.stderr[-2000:]
    for code in codes.values():                            # rebuilt: quiet again
        assert "unreadable" not in run(code, env, tmp).stderr


def test_tuning_file_damaged(tmp_path):
    """A damaged tuning file is a miss like any damaged store entry (quietly): tuned again, rewritten."""
    code = ("import warnings, numpy as np\nfrom flamefuse.codegen import tune\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    nb = tune.block_size(lambda x, block_size: 0, 'k', 50, lambda: [np.zeros(1)], reps=1)\n"
            "assert nb in tune.candidates(50) and not [x for x in w if 'flamefuse' in str(x.message)]\n"
            "print('ok')\n")
    path = tmp_path / "cache" / "codegen" / "blocksize.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"truncated": ')
    run(code, environment(tmp_path), tmp_path)
    assert "truncated" not in path.read_text()


def test_impossible_cache_locations_run_without_a_disk_cache(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    env = environment(tmp_path, FLAMEFUSE_CACHE_DIR=str(blocker / "cache"), NUMBA_CACHE_DIR=str(blocker / "numba"),
                      XDG_CACHE_HOME=str(blocker / "xdg"), HOME=str(blocker / "home"))
    codes = programs(tmp_path)
    (tmp_path / "kernels" / "__pycache__").write_text("blocks Numba's in-tree cache")
    for name, code in codes.items():
        done = run(code, env, tmp_path)
        assert done.stderr.count("without a disk cache") >= 1 or name == "generated", (name, done.stderr[-2000:])
    done = run(codes["generated"], env, tmp_path)
    assert "without a disk cache" in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; covered by the impossible path")
def test_read_only_cache_folder(tmp_path):
    env = environment(tmp_path)
    (tmp_path / "cache").mkdir()
    os.chmod(tmp_path / "cache", 0o555)
    try:
        assert "without a disk cache" in run(LAZY, env, tmp_path).stderr
    finally:
        os.chmod(tmp_path / "cache", 0o755)


def test_killed_while_compiling_then_runs(tmp_path):
    env = environment(tmp_path)
    code = programs(tmp_path)["generated"]
    for delay in (1.0, 2.5):
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        run(code, env, tmp_path)


def test_eight_concurrent_cold_starts(tmp_path):
    env = environment(tmp_path)
    code = programs(tmp_path)["generated"] + LAZY
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and out.strip().endswith("ok"), err[-3000:]
