"""Plans on disk: a second process (here: emptied memory caches) loads the plan instead of
partitioning, gets the same kernels and NumPy's result; a damaged file is rebuilt."""
import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.runtime import execute, plan_cache


def program(np, a, b):
    for _ in range(6):
        a = 0.5 * (a + b) - np.sqrt(np.abs(a * b)) + 1.0
        b = b * 0.25 + a
    return float((a + b).sum())


@pytest.fixture(autouse=True)
def recorded_from_one_element():
    lazy.configure(eager_below=0)
    yield
    lazy.configure(eager_below=1 << 15)


@pytest.fixture
def disk(monkeypatch, tmp_path):
    from flamefuse.cache import _usable
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLAMEFUSE_PLAN_CACHE", "1")
    monkeypatch.setattr(plan_cache, "WORTH_S", 0.0)
    _usable.cache_clear()
    yield tmp_path / "plans"
    _usable.cache_clear()


def forget(monkeypatch):
    """A new process: no plan or window partition in memory."""
    monkeypatch.setattr(execute, "_PLANS", {})
    monkeypatch.setattr(execute, "_WINDOW_PLANS", {})


def run(seed=0):
    rng = numpy.random.default_rng(seed)
    a, b = rng.standard_normal(5000), rng.standard_normal(5000)
    return program(numpy, a, b), program(lazy, lazy.asarray(a), lazy.asarray(b))


def test_a_stored_plan_is_loaded_not_partitioned(disk, monkeypatch):
    forget(monkeypatch)
    want, got = run()
    assert got == pytest.approx(want, rel=1e-12)
    stored = sorted(disk.glob("*.plan"))
    assert stored
    sources = {s.source for p in execute._PLANS.values() for s in p.steps}
    forget(monkeypatch)
    monkeypatch.setattr(execute, "partition_window", lambda *a: pytest.fail("partitioned again"))
    loads = execute.STATS["plan_loads"]
    want, got = run()
    assert got == pytest.approx(want, rel=1e-12)
    assert execute.STATS["plan_loads"] > loads
    assert {s.source for p in execute._PLANS.values() for s in p.steps} == sources


def test_a_damaged_or_foreign_file_is_rebuilt(disk, monkeypatch):
    forget(monkeypatch)
    run()
    for path in disk.glob("*.plan"):
        path.write_bytes(b"not a pickle")
    forget(monkeypatch)
    built = execute.STATS["plans_built"]
    want, got = run()
    assert got == pytest.approx(want, rel=1e-12)
    assert execute.STATS["plans_built"] > built


def test_other_programs_and_partitioners_have_other_keys(monkeypatch):
    from flamefuse.lazy import recorder
    rng = numpy.random.default_rng(1)
    recorded = []
    real = recorder.plan_for
    monkeypatch.setattr(recorder, "plan_for", lambda p, part: recorded.append(p) or real(p, part))
    program(lazy, lazy.asarray(rng.standard_normal(5000)), lazy.asarray(rng.standard_normal(5000)))
    program(lazy, lazy.asarray(rng.standard_normal(7000)), lazy.asarray(rng.standard_normal(7000)))
    keys = {plan_cache.key(plan_cache.text(p, "greedy")) for p in recorded}
    assert len(keys) == len(set(recorded)) >= 2
    assert plan_cache.key(plan_cache.text(recorded[0], "linear")) not in keys


def test_off_by_environment(disk, monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_PLAN_CACHE", "0")
    forget(monkeypatch)
    run()
    assert not list(disk.glob("*.plan"))
