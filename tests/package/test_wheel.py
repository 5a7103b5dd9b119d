"""The wheel gives a new user everything: built, installed into a fresh virtual environment, used
from an empty folder.

The repository's tracked files are copied to a temporary folder and built there
(``pip wheel``: a build in the checkout would leave ``build/`` behind, whose
stale files a later wheel would ship); the wheel, with its ``dask`` extra, is
installed by pip into a new virtual environment (no system site packages, so a
dependency missing from pyproject.toml fails; pip's cache makes it quick).  Then,
with no checkout on the path, from an empty folder: ``derive`` by name (twice:
the second from the record), ``--list``, ``--emit`` (the module equals
``generated/``), ``flamefuse.kernels`` against NumPy, ``tiles``,
``flamefuse.dask.kernel``, ``fuse`` of a script twice, and ``bench`` saying where
the benchmarks are.  Skipped, with the reason, only when pip cannot reach a
package index.  ``-m "not wheel"`` leaves it out (`make test` runs it: about
30 s on the quiet 2-core development machine, the install 5 s of it from pip's
cache; 1.5-3 min there under a load of 10-15).
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flamefuse.cli import main

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.wheel
OFFLINE = ("Could not find a version that satisfies", "No matching distribution found",
           "Failed to establish a new connection", "Temporary failure in name resolution",
           "Network is unreachable", "NewConnectionError")
TIMES: dict[str, float] = {}

SCRIPT = """\
import numpy as np
x = np.linspace(0.0, 1.0, 400_000)
y = np.sin(x) * 2.0 + x ** 2
z = (y - y.mean()) / (y.std() + 1.0)
print(repr(float(np.sum(z * z))), repr(float(z.max())))
"""


def _run(cmd, *, cwd, env, timeout=600, what=""):
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    TIMES[what or " ".join(map(str, cmd[:3]))] = time.perf_counter() - t
    return out


def _pip_or_skip(out, what):
    if out.returncode != 0:
        text = out.stdout + out.stderr
        if any(sign in text for sign in OFFLINE):
            pytest.skip(f"{what} needs a package index that pip cannot reach here: {text.strip().splitlines()[-1]}")
        pytest.fail(f"{what} failed:\n{text[-4000:]}")


def _sources(dest: Path) -> None:
    """The repository's files as a fresh clone has them (git's list; without git, all but caches)."""
    try:
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "results"))
        return
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """(bin folder, environment) of a fresh virtual environment with the wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    src, dist, env_dir = base / "src", base / "dist", base / "venv"
    _sources(src)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "FLAMEFUSE_", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    out = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(src)], cwd=base, env=env,
               what="build the wheel")
    _pip_or_skip(out, "building the wheel")
    (wheel,) = dist.glob("flamefuse-*.whl")
    out = _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=base, env=env,
               what="create the venv")
    assert out.returncode == 0, out.stderr
    bin_dir = env_dir / "bin"
    # this pip installs into the new environment (--python); --no-compile: the few modules a run
    # imports are compiled when first imported, not all of SciPy, SymPy, pandas and Dask now
    out = _run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", "--no-compile",
                f"{wheel}[dask]"], cwd=base, env=env, what="install the wheel and its dependencies")
    _pip_or_skip(out, "installing the wheel")
    empty = base / "empty"
    empty.mkdir()
    env.update(FLAMEFUSE_CACHE_DIR=str(base / "cache"), NUMBA_CACHE_DIR=str(base / "numba"),
               PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONNOUSERSITE="1")
    yield bin_dir, env, empty
    print("\nwheel test times (s): " + ", ".join(f"{k} {v:.1f}" for k, v in TIMES.items()))


def _ff(venv, *args, timeout=600):
    bin_dir, env, empty = venv
    return _run([str(bin_dir / "flamefuse"), *args], cwd=empty, env=env, timeout=timeout,
                what="flamefuse " + " ".join(args[:2]))


def _py(venv, code, timeout=600):
    bin_dir, env, empty = venv
    return _run([str(bin_dir / "python"), "-c", code], cwd=empty, env=env, timeout=timeout, what=code[:30])


def test_the_installed_package_is_not_the_checkout(venv):
    out = _py(venv, "import flamefuse, flamefuse.kernels as k; print(flamefuse.__file__); print(k.__path__[0])")
    assert out.returncode == 0, out.stderr
    package, kernels = out.stdout.split()
    assert "site-packages" in package and not package.startswith(str(ROOT))
    assert kernels == str(Path(package).parent / "kernels")


def test_derive_by_name_lists_and_emits(venv, capsys, tmp_path):
    listed = _ff(venv, "derive", "--list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))
    first, second = (_ff(venv, "derive", "spd_inverse", "--json") for _ in range(2))
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert main(["derive", str(ROOT / "specs" / "spd_inverse.yaml"), "--json"]) == 0
    assert json.loads(first.stdout) == json.loads(second.stdout) == json.loads(capsys.readouterr().out)
    emitted = _ff(venv, "derive", "spd_inverse", "--emit", str(tmp_path))
    assert emitted.returncode == 0, emitted.stderr
    assert (tmp_path / "spd_inverse.py").read_text() == (ROOT / "generated" / "spd_inverse.py").read_text()


def test_every_kernel_is_installed_and_one_matches_numpy(venv):
    """(One: Numba compiles each kernel module on its first call, seconds each.)"""
    code = ("import importlib.resources as r, numpy as np\n"
            "print(' '.join(sorted(p.name for p in r.files('flamefuse.kernels').iterdir() if p.name.endswith('.py'))))\n"
            "from flamefuse.kernels import spd_inverse\n"
            "rng = np.random.default_rng(0); m = rng.standard_normal((60, 60)); a = m @ m.T + 60 * np.eye(60)\n"
            "print(float(np.abs(spd_inverse.spd_inverse(a) - np.linalg.inv(a)).max()))\n")
    out = _py(venv, code)
    assert out.returncode == 0, out.stderr
    names, error = out.stdout.splitlines()
    assert names.split() == sorted(["__init__.py"] + [p.name for p in (ROOT / "generated").glob("*.py")])
    assert float(error) < 1e-10


def test_tiles_and_dask_kernel_by_name(venv):
    """(spd_inverse: the module the test above compiled, its Numba cache shared.)"""
    out = _ff(venv, "tiles", "spd_inverse", "--n", "96", "--chunk", "32", "--scheduler", "sync")
    assert out.returncode == 0, out.stderr
    err = float(out.stdout.split("max error relative to flamefuse.kernels.spd_inverse:")[1].split()[0])
    assert err < 1e-12
    code = ("import numpy as np, dask.array as da\nfrom flamefuse.dask import kernel\n"
            "rng = np.random.default_rng(1); m = rng.standard_normal((64, 64)); a = m @ m.T + 64 * np.eye(64)\n"
            "inv = kernel('spd_inverse')(da.from_array(a, chunks=32)).compute(scheduler='sync')\n"
            "print(float(np.abs(inv - np.linalg.inv(a)).max()))\n")
    out = _py(venv, code)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 1e-12


def test_fuse_a_script_twice(venv):
    bin_dir, env, empty = venv
    (empty / "script.py").write_text(SCRIPT)
    try:
        want = _run([str(bin_dir / "python"), "script.py"], cwd=empty, env=env, what="python script.py")
        assert want.returncode == 0, want.stderr
        for _ in range(2):     # the second run loads the plans and kernels the first one kept
            got = _ff(venv, "fuse", "script.py")
            assert got.returncode == 0, got.stderr
            assert "fallbacks 0" in got.stderr and "operations recorded 11" in got.stderr
            assert [float(v) for v in got.stdout.split()] == pytest.approx(
                [float(v) for v in want.stdout.split()], rel=1e-12)
    finally:
        (empty / "script.py").unlink()


def test_bench_says_the_benchmarks_are_in_the_repository(venv):
    out = _ff(venv, "bench")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "part of flamefuse's repository" in out.stderr
