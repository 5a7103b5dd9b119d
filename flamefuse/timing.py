"""The one timing harness: every measurement flamefuse and its benchmarks make goes through it.

``timed(call, *args, clock=None, **kwargs) -> (seconds, value)``
    One call of ``call(*args, **kwargs)``: its wall time and its result.
``seconds(call, *args, clock=None, **kwargs) -> float``
    The wall time of one call.
``best_of(call, reps, make=None, *, clock=None) -> float``
    The minimum of ``reps`` calls; with ``make``, each call gets a fresh argument
    ``make()``, made outside the timed region.
``side_by_side(contenders, reps, *, pause=0.0, seed=0, clock=None, sleep=None) -> {label: seconds}``
    The minimum time per label of ``contenders`` (label -> ``(call, make)``; ``make`` None
    calls ``call()``, else ``call(make())`` with the argument made outside the timed region),
    measured side by side: every repetition times each contender once, so that all of them
    see the same machine state.
``interleaved(measures, reps, *, pause=0.0, seed=0, sleep=None) -> {label: seconds}``
    The same loop over measurements that time themselves (label -> a callable returning
    seconds): for work whose timed region the caller delimits (a Dask graph persisted on
    workers and then forgotten).

The minimum is the statistic: a call is never faster than the machine allows, and every
disturbance (another process, a page fault, a spinning thread pool) only adds time.
``seed``: each repetition runs the labels in a fresh random order (``random.Random(seed)``,
shuffled once per repetition), so that no contender always follows another (the one after a
BLAS call pays for its threads winding down); ``seed=None`` keeps the order given.
``pause``: seconds to sleep before each timed call (OpenBLAS threads spin for a while after a
call), or a function ``(label, previous label or None) -> seconds`` for a pause only where
it is needed (where the BLAS library changes). The clock is ``time.perf_counter`` and the
sleep ``time.sleep`` unless others are passed (the tests pass fake ones).
"""
from __future__ import annotations

import random
import time
from typing import Callable

__all__ = ["best_of", "children_cpu", "interleaved", "seconds", "side_by_side", "timed"]


def children_cpu() -> float:
    """A clock for whole processes: the CPU seconds (user + system) of the child processes this
    one has waited for (``timed(run_a_process, clock=children_cpu)``: that process's CPU time,
    which a loaded machine inflates much less than its wall time)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(call: Callable, *args, clock: Callable[[], float] | None = None, **kwargs) -> tuple[float, object]:
    """``(seconds, value)`` of one call ``call(*args, **kwargs)``."""
    clock = clock or time.perf_counter
    t0 = clock()
    value = call(*args, **kwargs)
    return clock() - t0, value


def seconds(call: Callable, *args, clock: Callable[[], float] | None = None, **kwargs) -> float:
    """The wall time of one call ``call(*args, **kwargs)``."""
    return timed(call, *args, clock=clock, **kwargs)[0]


def best_of(call: Callable, reps: int, make: Callable | None = None, *,
            clock: Callable[[], float] | None = None) -> float:
    """The minimum time of ``reps`` calls (``call(make())`` with a fresh argument each, made
    outside the timed region, or ``call()``)."""
    return side_by_side({None: (call, make)}, reps, seed=None, clock=clock)[None]


def interleaved(measures: dict, reps: int, *, pause: float | Callable = 0.0, seed: int | None = 0,
                sleep: Callable[[float], None] | None = None) -> dict:
    """The minimum per label of ``measures`` (label -> a callable returning seconds), every
    repetition calling each once (see the module doc for ``pause`` and ``seed``)."""
    sleep = sleep or time.sleep
    best = {label: float("inf") for label in measures}
    order = list(measures)
    shuffle = random.Random(seed).shuffle if seed is not None else None
    previous = None
    for _ in range(reps):
        if shuffle is not None:
            shuffle(order)
        for label in order:
            wait = pause(label, previous) if callable(pause) else pause
            if wait:
                sleep(wait)
            best[label] = min(best[label], measures[label]())
            previous = label
    return best


def side_by_side(contenders: dict, reps: int, *, pause: float | Callable = 0.0, seed: int | None = 0,
                 clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None) -> dict:
    """The minimum time per label of ``contenders`` (label -> ``(call, make)``), side by side
    (see the module doc)."""
    def measure(call, make):
        if make is None:
            return lambda: seconds(call, clock=clock)
        return lambda: seconds(call, make(), clock=clock)
    return interleaved({label: measure(call, make) for label, (call, make) in contenders.items()}, reps,
                       pause=pause, seed=seed, sleep=sleep)
