import warnings

import pytest


@pytest.fixture(autouse=True)
def _quiet_numba():
    from numba.core.errors import NumbaPerformanceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        yield


@pytest.fixture
def interpreted(monkeypatch):
    """Kernels and loops run as plain Python (the same generated source), every operation
    recorded (``eager_below=0``), so hundreds of random programs stay fast."""
    import flamefuse.lazy as lazy
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(eager_below=0)
    yield
    lazy.configure(partitioner="greedy", eager_below=1 << 15)


@pytest.fixture
def recording():
    """Every operation recorded (``eager_below=0``) with real kernels, statistics reset, and a
    fallback to NumPy an error."""
    import flamefuse.lazy as lazy
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    lazy.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("error", lazy.FallbackWarning)
        yield
    lazy.configure(eager_below=1 << 15)


@pytest.fixture
def libraries(monkeypatch, tmp_path):
    """Native libraries built into and loaded from ``tmp_path`` (Numba's kernels stay in the
    usual cache), every operation recorded; the plans and product-group kernels of earlier
    tests are forgotten, so each kernel is looked up (and its library wanted) afresh."""
    from flamefuse.runtime import execute, linalg, native
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    import flamefuse.lazy as lazy
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setattr(native, "_folder", lambda: tmp_path)
    monkeypatch.setattr(native, "_LOADED", {})
    monkeypatch.setattr(native, "_WANTED", {})
    monkeypatch.setattr(execute, "_PLANS", {})
    monkeypatch.setattr(linalg, "_KERNELS", {})
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    yield tmp_path
    lazy.configure(eager_below=1 << 15)
