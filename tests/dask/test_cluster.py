"""End to end on a real distributed.LocalCluster (2 worker processes x 1 thread)."""
from __future__ import annotations

import dask.array as da
import numpy as np
import scipy.linalg as sl

from flamefuse.dask import kernel
from flamefuse.dask.metrics import graph_stats, moved_bytes


def spd(rng, n):
    m = rng.standard_normal((n, n))
    return m @ m.T / n + np.eye(n)


def test_spd_inverse_on_a_local_cluster(client):
    a = spd(np.random.default_rng(0), 200)
    x = client.persist(da.from_array(a, chunks=48))          # 5 x 5 tiles, the last one 8
    from distributed import wait
    wait(x)
    holders = {w for ws in client.who_has(x).values() for w in ws}
    out = kernel("spd_inverse")(x)
    before = moved_bytes(client)
    got = client.compute(out).result(timeout=120)
    ref = np.linalg.inv(a)
    assert np.linalg.norm(got - ref) <= 1e4 * np.finfo(float).eps * np.linalg.cond(a) * np.linalg.norm(ref)
    if len(holders) == 2:                                   # input on both workers: tiles had to move
        assert moved_bytes(client) > before


def test_cholesky_solve_on_a_local_cluster(client):
    rng = np.random.default_rng(1)
    a, b = spd(rng, 160), rng.standard_normal((160, 24))
    out = kernel("chol_trsm")(da.from_array(a, chunks=32), da.from_array(b, chunks=32))
    fut = client.compute(out)
    got = fut.result(timeout=120)
    ref = sl.solve_triangular(np.linalg.cholesky(a), b, lower=True)
    assert np.allclose(got, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    stats = graph_stats(out)
    assert stats.tasks > stats.critical_path > 1


def test_failure_on_a_worker_reaches_the_client(client):
    import pytest
    a = np.eye(8)
    a[5, 5] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="order 6"):
        client.compute(kernel("cholesky")(da.from_array(a, chunks=3))).result(timeout=60)
