import warnings

import pytest


@pytest.fixture(autouse=True)
def _quiet_numba():
    from numba.core.errors import NumbaPerformanceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        yield




@pytest.fixture
def recording(monkeypatch):
    """Record everything, run kernels as plain Python (no compile time); flushed before and
    after. The differential NumPy-semantics files use it for every test
    (``pytestmark = pytest.mark.usefixtures("recording")``)."""
    import flamefuse.lazy as lazy
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    yield
    lazy.flush()
    lazy.configure(eager_below=1 << 15)
