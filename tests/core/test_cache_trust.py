"""A cache someone else can write is never trusted (issue 28 item 1).

A real ``flamefuse fuse`` run fills a cache folder (plans, the script's kernel list, native
libraries, Numba's index and data files); the test then replaces every file with an attack
(a pickle whose loading runs code, a shared library whose constructor runs code, with a
matching digest sidecar) and makes the cache dangerous: a world-writable folder, or files owned
by another user (``nobody``, when the tests run as root). The next run must not run any of it,
must warn, and must still print NumPy's result.
"""
from __future__ import annotations

import os
import pickle
import pwd
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import numpy as np
a = np.linspace(0.0, 1.0, 100000)
b = np.linspace(1.0, 2.0, 100000)
for _ in range(40):
    a = 0.5 * (a + b) - np.sqrt(np.abs(a * b)) + 1.0
    b = b * 0.25 + a
print(repr(float((a + b).sum())))
"""

CONSTRUCTOR = """
#include <stdio.h>
__attribute__((constructor)) static void attack(void) {
    FILE *f = fopen("%s", "a"); if (f) { fputs("so\\n", f); fclose(f); }
}
const char *flamefuse_entry = "nothing";
"""


class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'a').write('pickle\\n')",)


def expected() -> str:
    namespace: dict = {}
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(SCRIPT, namespace)
    return out.getvalue().strip()


def fuse(tmp: Path, script: Path) -> subprocess.CompletedProcess:
    """``flamefuse fuse script`` with its cache in ``tmp / "cache"``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAMEFUSE_", "NUMBA_CACHE"))}
    env.update(FLAMEFUSE_CACHE_DIR=str(tmp / "cache"), FLAMEFUSE_NATIVE="1", FLAMEFUSE_PRELOAD="1",
               FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=str(ROOT),
               FLAMEFUSE_ADAPT="0",     # every run fused: each reads the planted files
               FLAMEFUSE_COMPILE="inline")  # each run's kernels are in the cache when it ends
    # (adaptive fusion's own file is checked in tests/runtime/test_adapt.py)
    done = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def cache_files(cache: Path) -> dict[str, list[Path]]:
    files = [p for p in cache.rglob("*") if p.is_file() and not p.name.startswith(".")]
    kinds = {"plan": [p for p in files if p.parent.name == "plans"],
             "script": [p for p in files if p.parent.name == "scripts"],
             "native": [p for p in files if p.suffix == ".so"],
             "numba": [p for p in files if p.suffix in (".nbi", ".nbc")]}
    return kinds


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A folder with the script and a cache that two real runs of it filled (the native libraries
    are built after run 1), once for the module's attacks: each plants its own in a copy."""
    tmp = tmp_path_factory.mktemp("filled")
    (tmp / "script.py").write_text(SCRIPT)
    fuse(tmp, tmp / "script.py")
    fuse(tmp, tmp / "script.py")
    return tmp


def plant(tmp: Path, marker: Path, filled: Path) -> dict[str, list[Path]]:
    """A copy of the filled cache in ``tmp`` (files keep their times, so Numba's index still
    matches its modules; the script stays ``filled``'s, at the path its kernel list is kept
    for), then every file that holds code or data replaced with an attack."""
    shutil.copytree(filled / "cache", tmp / "cache")
    kinds = cache_files(tmp / "cache")
    wanted = ["plan", "script", "numba"] + (["native"] if shutil.which("cc") else [])
    assert all(kinds[k] for k in wanted), {k: len(v) for k, v in kinds.items()}
    payload = pickle.dumps(Payload(str(marker)))
    for kind in ("plan", "script", "numba"):
        for path in kinds[kind]:
            path.write_bytes(payload)
    if kinds["native"]:
        c = tmp / "attack.c"
        c.write_text(CONSTRUCTOR % marker)
        evil = tmp / "attack.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(evil), str(c)], check=True)
        data = evil.read_bytes()
        import hashlib
        for path in kinds["native"]:
            path.write_bytes(data)                  # with a sidecar that matches: only the owner
            path.with_suffix(".sha256").write_text(f"{hashlib.sha256(data).hexdigest()} {len(data)}\n")
    return kinds


def test_a_world_writable_cache_folder_is_refused(tmp_path, filled):
    marker = tmp_path / "ATTACKED"
    plant(tmp_path, marker, filled)
    for folder in [tmp_path / "cache", *(p for p in (tmp_path / "cache").rglob("*") if p.is_dir())]:
        os.chmod(folder, 0o777)
    done = fuse(tmp_path, filled / "script.py")
    assert not marker.exists(), marker.read_text()
    assert float(done.stdout.strip().splitlines()[-1]) == pytest.approx(float(expected()), rel=1e-12)
    assert "refusing to use the cache" in done.stderr and done.stderr.count("refusing") == 1, done.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give files away")
def test_files_of_another_user_in_a_private_folder_are_refused(tmp_path, filled):
    marker = tmp_path / "ATTACKED"
    kinds = plant(tmp_path, marker, filled)
    nobody = pwd.getpwnam("nobody").pw_uid
    for paths in kinds.values():
        for path in paths:
            os.chown(path, nobody, -1)
            sidecar = path.with_suffix(".sha256")
            if sidecar.exists():
                os.chown(sidecar, nobody, -1)
    done = fuse(tmp_path, filled / "script.py")
    assert not marker.exists(), marker.read_text()
    assert float(done.stdout.strip().splitlines()[-1]) == pytest.approx(float(expected()), rel=1e-12)
    assert "refusing" in done.stderr, done.stderr


def test_new_cache_folders_are_private(tmp_path, monkeypatch):
    from flamefuse.cache import _usable, usable_cache_dir
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "a" / "b"))
    _usable.cache_clear()
    try:
        folder = usable_cache_dir("plans")
    finally:
        _usable.cache_clear()
    assert folder == tmp_path / "a" / "b" / "plans"
    for p in (tmp_path / "a", tmp_path / "a" / "b", folder):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700


def test_the_rules(tmp_path):
    from flamefuse import trust
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    assert trust.folder_problem(folder) is None
    os.chmod(folder, 0o770)
    assert "writable by its group" in trust.folder_problem(folder)
    os.chmod(folder, 0o700)
    below = folder / "x" / "y"
    below.mkdir(parents=True, mode=0o700)
    os.chmod(folder / "x", 0o757)
    assert "writable by others" in trust.folder_problem(below, top=folder)
    os.chmod(folder / "x", 0o755)
    assert trust.folder_problem(below, top=folder) is None
    f = folder / "f"
    f.write_bytes(b"data")
    os.chmod(f, 0o644)
    assert trust.file_problem(f) is None and trust.read_trusted(f) == b"data"
    os.chmod(f, 0o666)
    assert "writable by group and others" in trust.file_problem(f)
    (folder / "link").symlink_to(f)
    assert "not a regular file" in trust.file_problem(folder / "link")


def test_a_plan_file_can_only_hold_plain_values(tmp_path, monkeypatch):
    """Even the user's own plan file with the right identity and stamp cannot call a function."""
    from flamefuse.runtime import plan_cache
    from flamefuse.store import _usable
    marker = tmp_path / "ATTACKED"
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLAMEFUSE_PLAN_CACHE", "1")
    _usable.cache_clear()
    plan_cache.store("program", "greedy", (("src",), ((0, ((0, 1, (3,)),)),), (), 1.5, (), ()))
    assert plan_cache.load("program", "greedy") == (("src",), ((0, ((0, 1, (3,)),)),), (), 1.5, (), ())
    assert plan_cache.load("other program", "greedy") is None
    (path,) = (tmp_path / "cache" / "plans").glob("*.plan")
    head = path.read_bytes().split(b"\n", 1)[0] + b"\n"     # the store's header: identity and stamp
    path.write_bytes(head + pickle.dumps(Payload(str(marker))))
    assert plan_cache.load("program", "greedy") is None and not marker.exists()
    _usable.cache_clear()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give files away")
def test_a_numba_data_file_of_another_user_is_not_unpickled(tmp_path):
    """The index is the user's own; only the data file it names was replaced (and given away)."""
    marker = tmp_path / "ATTACKED"
    (tmp_path / "m.py").write_text("from flamefuse.numba_cache import cached_njit\n\n\n"
                                   "def twice(x):\n    return 2 * x\n\n\ntwice = cached_njit(twice)\n")
    code = "import m; print(m.twice(21))"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAMEFUSE_", "NUMBA_CACHE"))}
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{ROOT}"
    run = lambda: subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                                 text=True, timeout=600)
    assert run().stdout.strip() == "42"
    data = sorted((tmp_path / "__pycache__").glob("m.twice-*.nbc"))
    assert data and sorted((tmp_path / "__pycache__").glob("m.twice-*.nbi"))
    for path in data:
        path.write_bytes(pickle.dumps(Payload(str(marker))))
        os.chown(path, pwd.getpwnam("nobody").pw_uid, -1)
    done = run()
    assert done.stdout.strip() == "42" and not marker.exists(), done.stderr[-2000:]
    assert "refusing Numba's cache" in done.stderr
