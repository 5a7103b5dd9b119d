"""Fixtures of the Dask tests: one LocalCluster (2 worker processes x 1 thread) for the session."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def client():
    """A real ``distributed.LocalCluster`` (processes, 2 workers, 1 thread each), closed at the end."""
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           env={"OPENBLAS_NUM_THREADS": "1"})
    c = Client(cluster, timeout="60s")
    yield c
    c.close(timeout=30)
    cluster.close(timeout=30)
