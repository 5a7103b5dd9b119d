"""``flamefuse fuse`` ends as ``python SCRIPT`` does on every way out (``sys.exit(code)``, an
uncaught exception, the end) and still flushes, saves the script's kernel list, builds native
libraries and prints its summary; a failed native build is retried unless the kernel itself
cannot be linked."""
import stat
import subprocess

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.cli import main
from flamefuse.runtime import execute, native, preload

WORK = "import sys\nimport numpy as np\nx = np.arange(60000.0)\ny = np.sqrt(x * 3.0 + 2.0)\n" \
       "print(float(y.sum()))\n"
WANT = float(numpy.sqrt(numpy.arange(60000.0) * 3.0 + 2.0).sum())


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """A private cache with kernel lists and native libraries on (as ``flamefuse fuse`` runs)."""
    from flamefuse.cache import _usable
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLAMEFUSE_PRELOAD", "1")
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setattr(preload, "_SEEN", {})
    monkeypatch.setattr(native, "_LOADED", {})
    monkeypatch.setattr(native, "_WANTED", {})
    monkeypatch.setattr(execute, "_PLANS", {})
    _usable.cache_clear()
    yield tmp_path / "cache"
    _usable.cache_clear()
    lazy.configure(eager_below=1 << 15)


def _fuse(script, capsys, *args):
    status = main(["fuse", str(script), *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("ending, status", [("sys.exit(3)", 3), ("raise SystemExit(4)", 4),
                                            ("sys.exit()", 0), ("sys.exit(None)", 0),
                                            ("", 0)])
def test_sys_exit_keeps_its_code_and_the_run_is_summarised_saved_and_built(
        cache, tmp_path, capsys, ending, status):
    script = tmp_path / "s.py"
    script.write_text(WORK + ending + "\nprint('not reached')\n" * bool(ending))
    got, out, err = _fuse(script, capsys)
    assert got == status
    assert float(out.split()[0]) == pytest.approx(WANT, rel=1e-13) and "not reached" not in out
    assert "flamefuse fuse:" in err and "operations recorded" in err
    assert "native kernels for the next run" in err                  # libraries built
    assert preload.kernels(script)                                     # kernel list saved
    assert list((cache / "native").glob("*.so"))


def test_sys_exit_with_a_message_prints_it_and_exits_1(cache, tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(WORK + "sys.exit('stopped: bad input')\n")
    got, out, err = _fuse(script, capsys)
    assert got == 1 and "stopped: bad input" in err and "operations recorded" in err


def test_an_uncaught_exception_prints_the_scripts_traceback_exits_1_and_is_summarised(
        cache, tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(WORK + "def fail(v):\n    raise ValueError(f'bad value {v > 0}')\n"
                      "fail(float(y.max()))\n")
    got, out, err = _fuse(script, capsys)
    assert got == 1
    assert float(out.split()[0]) == pytest.approx(WANT, rel=1e-13)
    trace = err[err.index("Traceback (most recent call last):"):].splitlines()
    assert trace[1] == f'  File "{script}", line 8, in <module>'   # the script's frame first
    assert "ValueError: bad value True" in err and "flamefuse/cli/fuse.py" not in err
    assert err.index("ValueError") < err.index("flamefuse fuse:")
    assert preload.kernels(script) and list((cache / "native").glob("*.so"))


def test_a_script_that_ends_normally_still_exits_0(cache, tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(WORK)
    assert _fuse(script, capsys)[0] == 0


# -- native builds: a failure of the environment is retried, one of the kernel is not ----------

@pytest.fixture
def wanted(cache, monkeypatch, tmp_path):
    """A kernel this process loaded through Numba, wanted as a native library in ``tmp_path``."""
    folder = tmp_path / "native"
    folder.mkdir()
    monkeypatch.setattr(native, "_folder", lambda: folder)
    monkeypatch.setattr(native, "_CC_LINKS", {}, raising=False)
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    x = lazy.arange(1000.0)
    numpy.asarray(lazy.sqrt(x * 5.0 + 1.0))
    assert len(native._WANTED) == 1
    return folder, dict(native._WANTED)


def _markers(folder):
    return sorted(p.suffix for p in folder.iterdir() if not p.name.startswith("."))


@pytest.mark.parametrize("cc", ["/bin/false", "/no/such/compiler"])
def test_a_failing_or_missing_compiler_leaves_no_marker_and_the_next_run_builds(
        wanted, monkeypatch, cc):
    folder, want = wanted
    monkeypatch.setenv("CC", cc)
    assert native.build_wanted() == 0
    assert _markers(folder) == []                    # no .none: tried again next time
    monkeypatch.delenv("CC")
    native._WANTED.update(want)
    assert native.build_wanted() == 1 and _markers(folder) == [".sha256", ".so"]     # the library and its digest


def test_a_full_disk_leaves_no_marker(wanted, monkeypatch):
    folder, want = wanted

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(subprocess, "run", full)
    assert native.build_wanted() == 0 and _markers(folder) == []


def test_a_kernel_the_linker_refuses_while_the_compiler_works_is_marked(wanted, monkeypatch,
                                                                         tmp_path):
    folder, _ = wanted
    cc = tmp_path / "picky-cc"
    cc.write_text('#!/bin/sh\ncase "$*" in *k.o*) exit 1;; esac\nexec cc "$@"\n')
    cc.chmod(cc.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CC", str(cc))
    assert native.build_wanted() == 0 and _markers(folder) == [".none"]
