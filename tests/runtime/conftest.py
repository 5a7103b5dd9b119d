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
