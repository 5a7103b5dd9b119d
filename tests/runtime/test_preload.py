"""Kernels a script used last time are loaded for the same argument types at start-up."""
import numpy
import pytest

from flamefuse.runtime import kernel, preload

SOURCE = '''from numba import njit
@njit(cache=True)
def kernel(a0, s0):
    for i in range(a0.shape[0]):
        a0[i] = a0[i] * s0
'''


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    from flamefuse.cache import _usable
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLAMEFUSE_PRELOAD", "1")
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "0")
    monkeypatch.setattr(preload, "_SEEN", {})
    _usable.cache_clear()
    script = tmp_path / "script.py"
    script.write_text("print('hello')\n")
    yield script
    _usable.cache_clear()


def sig_of(*args):
    from flamefuse.sigcodes import signature
    return signature(args)


def numba_sig(*args):
    from numba import typeof
    return tuple(typeof(a) for a in args)


def test_a_recorded_kernel_is_loaded_for_its_types_next_time(fresh, monkeypatch):
    args = (numpy.ones(5), numpy.float64(2.0))
    preload.record(SOURCE, sig_of(*args))
    preload.save(fresh)
    monkeypatch.setattr(kernel, "_MEMORY", {})
    monkeypatch.setattr(preload, "_SEEN", {})
    assert preload.load(preload.kernels(fresh)) == 1
    k = kernel.compile_kernel(SOURCE)
    assert numba_sig(*args) in k.overloads            # compiled (or read from Numba's cache) already
    a = numpy.ones(5)
    k(a, 3.0)
    assert a.tolist() == [3.0] * 5


def test_another_script_text_or_a_damaged_file_loads_nothing(fresh):
    preload.record(SOURCE, sig_of(numpy.ones(3), numpy.float64(1.0)))
    preload.save(fresh)
    fresh.write_text("print('changed')\n")
    assert preload.load(preload.kernels(fresh)) == 0
    preload.save(fresh)
    preload._file(fresh).write_bytes(b"garbage")
    assert preload.load(preload.kernels(fresh)) == 0


def test_off_by_environment(fresh, monkeypatch):
    preload.record(SOURCE, sig_of(numpy.ones(3), numpy.float64(1.0)))
    preload.save(fresh)
    monkeypatch.setenv("FLAMEFUSE_PRELOAD", "0")
    assert preload.load(preload.kernels(fresh)) == 0


def test_only_kernels_called_in_this_run_are_kept(fresh, monkeypatch):
    """A kernel the last run loaded but this run never called is not listed again (it would be
    loaded through Numba at every later start)."""
    preload.record(SOURCE, sig_of(numpy.ones(3), numpy.float64(1.0)))
    preload.save(fresh)
    monkeypatch.setattr(preload, "_SEEN", {})
    assert preload.load(preload.kernels(fresh)) == 1
    other = SOURCE.replace("a0[i] * s0", "a0[i] + s0")
    preload.record(other, sig_of(numpy.ones(3), numpy.float64(1.0)))
    preload.save(fresh)
    assert [src for src, _ in preload.kernels(fresh)] == [other]


def test_compiling_in_the_background_loads_no_kernel_through_numba_that_will_get_a_library(fresh, monkeypatch):
    """A kernel with no native library runs as NumPy's calls while the background compiler
    builds it (flamefuse.runtime.compiler): loading it through Numba at start-up imported Numba
    for nothing. Only one whose library cannot be built is loaded (inline, it is as before)."""
    from flamefuse.runtime import native
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    entries = [(SOURCE, sig_of(numpy.ones(5), numpy.float64(2.0)))]
    loaded = []

    def compile_kernel(source):
        loaded.append(source)
        raise RuntimeError("loaded through Numba")
    monkeypatch.setattr(kernel, "compile_kernel", compile_kernel)
    monkeypatch.setenv("FLAMEFUSE_COMPILE", "background")
    assert not preload.needs_numba(entries)
    assert preload.load(entries) == 0 and not loaded
    monkeypatch.setattr(native, "cannot_build", lambda source, sig: True)
    assert preload.needs_numba(entries)
    monkeypatch.setattr(native, "cannot_build", lambda source, sig: False)
    monkeypatch.setenv("FLAMEFUSE_COMPILE", "inline")
    assert preload.needs_numba(entries)
