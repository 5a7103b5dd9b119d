"""The machine identity (flamefuse.machine): one reading of /proc/cpuinfo for both keys, exact texts kept."""
import os

import pytest

from flamefuse import machine

CPUINFO = ["processor\t: 0\n", "vendor_id\t: GenuineIntel\n", "model name\t: Test CPU @ 3.00GHz\n",
           "flags\t\t: fpu sse2 avx2\n", "\n", "processor\t: 1\n", "model name\t: Test CPU @ 3.00GHz\n",
           "flags\t\t: fpu sse2 avx2\n"]


@pytest.fixture
def fake(monkeypatch):
    def use(lines, platform=("x86_64-proc", "x86_64")):
        monkeypatch.setattr(machine, "_CPUINFO", [lines])
        monkeypatch.setattr(machine, "_COMPILED", [])
        monkeypatch.setattr(machine, "_processor", lambda: platform[0])
        monkeypatch.setattr(machine, "_machine", lambda: platform[1])
    return use


def test_tuning_key_is_model_cores_and_blas_threads(fake, monkeypatch):
    fake(CPUINFO)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert machine.tuning_key() == f"Test CPU @ 3.00GHz x{os.cpu_count()} threads=3"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")        # read at each call, OpenBLAS's first
    assert machine.tuning_key().endswith("threads=1")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert machine.tuning_key().endswith("threads=default")


def test_without_cpuinfo_or_a_model_line_the_platform_names_the_cpu(fake):
    fake(None)
    assert machine.cpu_model() == "x86_64-proc"
    fake(["processor\t: 0\n", "Features\t: fp asimd\n"], platform=("", "aarch64"))
    assert machine.cpu_model() == "aarch64"


def test_compiled_key_is_the_model_the_platform_and_the_flags(fake):
    fake(CPUINFO)
    key = machine.compiled_key()
    assert key.startswith("Test CPU @ 3.00GHz (x86_64, flags ") and machine.cpu_flags() == "fpu sse2 avx2"
    fake(CPUINFO[:3] + ["flags\t\t: fpu sse2\n"])
    assert machine.compiled_key() != key, "other flags, other machine"
    fake(None)
    assert machine.compiled_key().startswith("x86_64-proc (x86_64, flags ")


def test_every_user_reads_the_one_identity():
    from flamefuse import identity, store
    from flamefuse.codegen import tune
    from flamefuse.runtime import native
    assert tune.machine_key is machine.tuning_key
    assert identity.machine() == machine.compiled_key()
    src = native._digest("def kernel():\n    pass\n", ())
    saved = machine._COMPILED[:]
    try:
        machine._COMPILED[:] = ["another machine"]
        store.stamp.cache_clear()
        assert native._digest("def kernel():\n    pass\n", ()) != src
    finally:
        machine._COMPILED[:] = saved
        store.stamp.cache_clear()


def test_the_keys_start_no_subprocess_where_cpuinfo_names_the_model(monkeypatch):
    """platform.processor() runs `uname -p` in a subprocess: a warm `flamefuse fuse` paid
    10-25 ms for it in every process."""
    import subprocess
    monkeypatch.setattr(machine, "_CPUINFO", [CPUINFO])
    monkeypatch.setattr(machine, "_COMPILED", [])

    def refuse(*args, **kwargs):
        raise AssertionError(f"a subprocess was started: {args}")
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "check_output", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)
    import platform
    monkeypatch.setattr(platform, "_uname_cache", None, raising=False)
    monkeypatch.setattr(platform.uname_result, "processor", property(lambda self: refuse("uname -p")),
                        raising=False)
    key = machine.compiled_key()
    assert key.startswith("Test CPU @ 3.00GHz (") and f"({platform.machine()}, flags " in key
    assert machine.cpu_model() == "Test CPU @ 3.00GHz"
