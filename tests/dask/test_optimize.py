"""flamefuse.dask.optimize: per-chunk fused kernels for dask.array code, same results as Dask's."""
from __future__ import annotations

import math

import dask
import dask.array as da
import numpy as np
import pytest

import flamefuse.lazy as lazy
from flamefuse.dask import optimize, optimize_graph
from flamefuse.dask.chunks import _run_lazy

N, CHUNK = 240_000, 60_000        # above flamefuse.lazy's eager threshold: chunks are recorded and fused


@pytest.fixture(scope="module")
def xs():
    rng = da.random.default_rng(0)
    x = rng.uniform(1.0, 2.0, N, chunks=CHUNK)
    y = rng.uniform(-1.0, 1.0, N, chunks=CHUNK)
    return dask.persist(x, y, scheduler="threads")


def black_scholes_like(x, y):
    d1 = (da.log(x / 1.5) + 0.2) / (0.3 * math.sqrt(2.0))
    return x * da.exp(-d1 * d1 / 2.0) - 1.5 * da.sqrt(x) * (y < 0) + da.tanh(y) ** 3


def fused_layers(arr) -> int:
    graph = arr.__dask_graph__()
    return sum(getattr(getattr(layer, "task", None), "func", None) is _run_lazy for layer in graph.layers.values())


def compute(*arrays):
    return dask.compute(*arrays, scheduler="threads")


def test_elementwise_chain_runs_as_kernels_with_the_same_result(xs):
    x, y = xs
    expr = black_scholes_like(x, y)
    (opt,) = optimize(expr)
    assert fused_layers(opt) == 1
    lazy.reset_stats()
    (got,) = compute(opt)               # the same keys as expr: computed apart, not deduplicated
    stats = lazy.stats()
    assert stats.get("flushes", 0) >= 4 and not stats["fallback_names"]    # one fused flush per chunk
    assert sum(stats.get(f"kernels_{k}", 0) for k in ("compiled", "memory_hits", "disk_hits")) >= 1
    (ref,) = compute(expr)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("reduce", [lambda e: e.sum(), lambda e: e.max(), lambda e: e.min(),
                                    lambda e: e.mean(), lambda e: e.prod()])
def test_reductions_are_tree_reductions_of_fused_partials(xs, reduce):
    x, y = xs
    expr = reduce((x * 0.5 + y * y) / 1.25 + 0.2)
    (opt,) = optimize(expr)
    (got,), (ref,) = compute(opt), compute(expr)
    assert fused_layers(opt) == 1
    assert np.isclose(got, ref, rtol=1e-10)


def test_axis_reductions_of_2d_arrays():
    a = da.random.default_rng(1).standard_normal((600, 400), chunks=(300, 200))
    (a,) = dask.persist(a, scheduler="threads")
    for expr in ((da.exp(a) * 2 - a).sum(axis=0), (a * a + 1).max(axis=1), (abs(a) + 1).sum(axis=(0, 1))):
        (opt,) = optimize(expr)
        (got,), (ref,) = compute(opt), compute(expr)
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_array_optimize_hook(xs):
    x, y = xs
    expr = black_scholes_like(x, y)
    ref, total_ref = compute(expr, expr.sum())
    lazy.reset_stats()
    with dask.config.set(array_optimize=optimize_graph):
        got, total = compute(expr, expr.sum())
    assert lazy.stats().get("flushes", 0) >= 4
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)
    assert np.isclose(total, total_ref, rtol=1e-12)


def test_non_array_values_and_single_operations_pass_through(xs):
    x, _ = xs
    assert optimize(3, "a")[0] == 3
    (opt,) = optimize(x + 1)            # one operation per chunk: left to Dask
    assert fused_layers(opt) == 0
    np.testing.assert_array_equal(compute(opt)[0], compute(x + 1)[0])


def test_other_functions_run_in_numpy(xs):
    x, y = xs
    expr = da.cumsum(x * 2 + y, axis=0) + da.arctan2(x, y) * 2     # cumsum, arctan2: not fused by lazy
    (opt,) = optimize(expr)
    (got,), (ref,) = compute(opt), compute(expr)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
