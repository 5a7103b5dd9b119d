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
    monkeypatch.setattr(plan_cache, "WORTH_OPS", 0)
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


def _programs():
    from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
    from flamefuse.runtime.views import make_view

    def prog(stride=1, dtype="float64", axis=None, fresh=True, scalar="float64"):
        v = make_view(0, (8,), (stride,))
        op = Op("ew", "add", Ref(1, make_view(0, (8,), (1,))), (Ref(0, v), Scalar(0, scalar)), (8,),
                (dtype, scalar, dtype), axis)
        return Program((op,), (BaseInfo(dtype, 16, False, False), BaseInfo(dtype, 8, fresh, False)))
    return prog


def test_a_recorded_program_is_keyed_by_a_digest_of_its_fields_not_its_repr():
    """Its repr took 14-22 ms for a 1000-operation program at every warm start; every field
    still tells programs apart."""
    prog = _programs()
    base = prog()
    key = plan_cache.text(base, "greedy")
    assert key.startswith("plan-") and len(key) == 5 + 64, key
    assert plan_cache.text(prog(), "greedy") == key, "equal programs, equal keys"
    others = [prog(stride=2), prog(dtype="float32"), prog(fresh=False), prog(scalar="int64")]
    keys = {plan_cache.text(p, "greedy") for p in others} | {plan_cache.text(base, "linear"), key}
    assert len(keys) == len(others) + 2
    assert plan_cache.text("program", "greedy") == "greedy|'program'"   # anything else: its repr


def test_the_key_encoding_names_every_field_of_a_program():
    """plan_cache._encoded lists a program's fields by hand (for speed): a field added to one of
    these types and not to the encoding would give two different programs one key (one plan),
    so adding one must fail here until the encoding writes it too."""
    from flamefuse.values import fields
    from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
    from flamefuse.runtime.views import View
    written = {Program: {"ops", "bases"}, Op: {"kind", "name", "out", "ins", "shape", "loop", "axis"},
               Ref: {"base", "view"}, Scalar: {"index", "dtype"},
               View: {"offset", "shape", "strides", "wrap"}, BaseInfo: {"dtype", "size", "fresh", "dead"}}
    for cls, names in written.items():
        assert set(fields(cls)) == names, cls.__name__


def test_a_program_has_the_same_key_in_every_process():
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_plan_cache as t\n"
            "from flamefuse.runtime import plan_cache\n"
            "print(plan_cache.text(t._programs()(), 'greedy'))")
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    keys = {subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True,
                           check=True).stdout.strip() for _ in range(2)}
    assert keys == {plan_cache.text(_programs()(), "greedy")}


class _Clock:
    """``time`` for :mod:`flamefuse.runtime.execute`: ``step`` seconds pass between two reads
    (1 s: any plan took "long" to build, as under load; 0: every plan was instant)."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def perf_counter(self):
        self.now += self.step
        return self.now


@pytest.mark.parametrize("step", [0.0, 1.0], ids=["quiet", "loaded"])
def test_whether_a_plan_is_stored_does_not_depend_on_how_long_it_took(monkeypatch, tmp_path, step):
    """A small program's plan is never stored, a larger one's always, whatever the clock says:
    the build time was the rule, and under load a warm run's quick plan crossed it and was
    written (tests/runtime/test_startup.py's warm run wrote a plan)."""
    from flamefuse.cache import _usable
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLAMEFUSE_PLAN_CACHE", "1")
    _usable.cache_clear()
    forget(monkeypatch)
    monkeypatch.setattr(execute, "time", _Clock(step))
    try:
        rng = numpy.random.default_rng(3)
        a, b = rng.standard_normal(5000), rng.standard_normal(5000)
        small = lazy.asarray(a) * 2.0 + lazy.asarray(b)                 # 2 operations
        numpy.testing.assert_array_equal(small.__array__(), a * 2.0 + b)
        assert not list((tmp_path / "plans").glob("*.plan")), "a small program's plan was stored"
        want, got = program(numpy, a, b), program(lazy, lazy.asarray(a), lazy.asarray(b))
        assert got == pytest.approx(want, rel=1e-12)
        assert list((tmp_path / "plans").glob("*.plan")), "a large program's plan was not stored"
    finally:
        _usable.cache_clear()
