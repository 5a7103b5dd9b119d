"""The benchmarks' shared timing loop: contenders timed side by side.

``side_by_side(contenders, reps)``: fresh inputs, a fresh random order every repetition, the
minimum of ``reps`` per contender (used by ``benchmarks/*.py``, which ``flamefuse bench`` runs).
"""
from __future__ import annotations


def side_by_side(contenders: dict, reps: int, pause: float = 0.2) -> dict:
    """Minimum time per label of ``contenders`` (label -> (call, make_input)): every repetition
    runs each once on a fresh input made outside the timed region, in a fresh random order,
    after a pause (OpenBLAS threads spin for a while after a call)."""
    import random
    import time
    best = {k: float("inf") for k in contenders}
    order, rng = list(contenders), random.Random(0)
    for _ in range(reps):
        rng.shuffle(order)
        for label in order:
            call, make = contenders[label]
            arg = make()
            time.sleep(pause)
            t = time.perf_counter()
            call(arg)
            best[label] = min(best[label], time.perf_counter() - t)
    return best
