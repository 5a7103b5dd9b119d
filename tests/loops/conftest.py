"""Compiled loops' tests: native libraries on, in one cache folder for the whole session (each
loop and signature compiles once: a few seconds each), built inline; the guard's timing of
compiled calls against the loop as written off (results must not depend on timings), except
where a test turns it on (``adaptive``)."""
import pytest


@pytest.fixture(scope="session")
def loop_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("loops-cache")


@pytest.fixture(autouse=True)
def _native_loops(monkeypatch, loop_cache):
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(loop_cache))
    monkeypatch.setenv("FLAMEFUSE_COMPILE", "inline")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _no_timing(monkeypatch):
    from flamefuse.loops import guard
    monkeypatch.setattr(guard, "ADAPTIVE", False)


@pytest.fixture
def adaptive(monkeypatch):
    from flamefuse.loops import guard
    monkeypatch.setattr(guard, "ADAPTIVE", True)
