"""The timing harness (flamefuse.timing) on a fake clock: what is timed, the minimum, the order, the pauses."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from flamefuse import timing


class Clock:
    """A clock that moves only when told to: ``clock.spend(s)`` is work taking s seconds (multiples
    of 1/64 in the tests: sums and differences are exact)."""

    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def spend(self, s):
        self.now += s

    def sleep(self, s):
        self.slept.append(s)
        self.now += s


def test_timed_and_seconds_measure_the_call_only():
    clock = Clock()
    assert timing.timed(lambda x: (clock.spend(0.25), x * 2)[1], 21, clock=clock) == (0.25, 42)
    assert timing.seconds(clock.spend, 1.5, clock=clock) == 1.5
    assert timing.timed(lambda a, b=0: (clock.spend(a), a + b)[1], 2.0, b=3, clock=clock) == (2.0, 5.0)


def test_best_of_is_the_minimum_and_excludes_making_the_input():
    clock, costs, made = Clock(), iter([3.0, 1.0, 2.0]), []

    def make():
        clock.spend(50.0)               # never counted
        made.append(1)
        return next(costs)
    assert timing.best_of(clock.spend, 3, make, clock=clock) == 1.0 and len(made) == 3
    costs = iter([0.5, 0.25])
    assert timing.best_of(lambda: clock.spend(next(costs)), 2, clock=clock) == 0.25


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from("abcde"), st.lists(st.integers(1, 640).map(lambda k: k / 64), min_size=1, max_size=6),
                       min_size=1), st.integers(0, 3), st.sampled_from([0, 0.25, 1.0]))
def test_side_by_side_minimum_per_label_on_a_fake_clock(times, seed, pause):
    reps = min(len(v) for v in times.values())
    clock, runs = Clock(), []
    left = {k: list(v) for k, v in times.items()}

    def call(label):
        def run(arg):
            assert arg == ("fresh", label)
            runs.append(label)
            clock.spend(left[label].pop(0))
        return run

    def make(label):
        return lambda: (clock.spend(7.0), ("fresh", label))[1]
    got = timing.side_by_side({k: (call(k), make(k)) for k in times}, reps, pause=pause, seed=seed,
                              clock=clock, sleep=clock.sleep)
    assert got == {k: min(v[:reps]) for k, v in times.items()}
    # every repetition runs each label once, in the order random.Random(seed) shuffles to
    order, rng, want = list(times), random.Random(seed), []
    for _ in range(reps):
        rng.shuffle(order)
        want += order
    assert runs == want
    assert clock.slept == ([pause] * len(runs) if pause else [])


def test_fixed_order_and_a_pause_only_where_the_function_says():
    clock, runs = Clock(), []
    contenders = {k: (lambda k=k: (runs.append(k), clock.spend(1.0)), None) for k in ("numpy", "LAPACK", "ours")}
    got = timing.side_by_side(contenders, 2, seed=None, clock=clock, sleep=clock.sleep,
                              pause=lambda label, prev: 0.5 if "LAPACK" in (label, prev) else 0)
    assert got == {"numpy": 1.0, "LAPACK": 1.0, "ours": 1.0}
    assert runs == ["numpy", "LAPACK", "ours"] * 2
    assert clock.slept == [0.5, 0.5, 0.5, 0.5]       # before LAPACK and after it, each repetition


def test_interleaved_takes_the_measurements_own_seconds():
    samples = {"x": iter([4.0, 2.0, 3.0]), "y": iter([1.0, 5.0, 0.5])}
    got = timing.interleaved({k: (lambda it=it: next(it)) for k, it in samples.items()}, 3, seed=1)
    assert got == {"x": 2.0, "y": 0.5}


def test_zero_repetitions_time_nothing():
    assert timing.side_by_side({"a": (pytest.fail, None)}, 0) == {"a": float("inf")}


def test_children_cpu_counts_a_child_process_cpu_time():
    import subprocess
    import sys
    from flamefuse.timing import children_cpu, timed
    cpu, _ = timed(subprocess.run, [sys.executable, "-c", "sum(i * i for i in range(3_000_000))"],
                   check=True, clock=children_cpu)
    assert cpu > 0.05                  # the child's loop, not this process's (which only waited)
