"""Searches that end: at most ``limit`` invariants kept, a time budget, progress while it runs.

A chain of 30 operations has 32768 fused invariants (15 s to find, then minutes each to
derive); ``--engine csp`` can run for hours. ``flamefuse derive`` therefore asks
:func:`search` for the invariants:

``search(problem, engine, limit=LIMIT, time_limit=TIME_LIMIT, progress=None) -> Found``
    runs the engine (``cpsat``, ``csp`` or ``brute``), keeps the first ``limit`` distinct
    invariants found (``limit=0``: all; they are then sorted as the engines sort them) and goes
    on counting the others until the search ends or ``time_limit`` seconds have passed
    (``None`` or 0: no limit). ``progress(text)`` is called about every ``PROGRESS_S`` seconds
    once a search has run that long (the command writes it to stderr).

``Found``: ``invariants`` (sorted, at most ``limit``), ``more`` (distinct invariants found
beyond the limit), ``complete`` (the search ran to its end: no other invariant exists) and
``note()``, the sentence that says what was left out (None when nothing was).

CP-SAT stops by itself (its callback and its time parameter). The brute engine is stopped
between two solutions and, in the main thread, by a ``SIGALRM`` timer while it searches. The
csp engine, whose python-constraint solver is compiled and can run on in C past any alarm, runs
in a child process when a time limit is set (:mod:`flamefuse.search.child`), killed when the
time is up.
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from flamefuse.limits import LIMIT, TIME_LIMIT
from flamefuse.pme.model import Problem, with_const_tasks
from flamefuse.search.solutions import Invariant, sort_key

PROGRESS_S = 2.0
ENGINES = ("brute", "cpsat", "csp")        # the engines search() runs (``derive --engine``)


@dataclass
class Found:
    invariants: list
    more: int
    complete: bool
    limit: int
    time_limit: float | None

    def note(self) -> str | None:
        shown = len(self.invariants)
        if self.complete and not self.more:
            return None
        if self.complete:
            return (f"showing {shown} of {shown + self.more} fused invariants: {self.more} more exist "
                    f"(--limit N shows N, --limit 0 all)")
        found = f"showing {shown} of {shown + self.more} fused invariants found" if self.more else \
            f"found {shown} fused invariant{'s' * (shown != 1)}"
        return (f"{found}; more may exist: the search stopped at the time limit of {self.time_limit:g} s "
                f"(--time-limit S searches longer, --time-limit 0 without limit)")


class _TimeUp(Exception):
    pass


@contextmanager
def _alarm(seconds: float | None):
    """Raise _TimeUp in the main thread after ``seconds`` (no timer elsewhere or without SIGALRM)."""
    usable = seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def ring(signum, frame):
        raise _TimeUp()
    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def search(problem: Problem, engine: str = "cpsat", limit: int = LIMIT, time_limit: float | None = TIME_LIMIT,
           progress=None) -> Found:
    """See the module doc."""
    time_limit = time_limit or None
    start = time.perf_counter()
    kept: list = []
    seen: set = set()
    state = {"more": 0, "shown": start, "stopped": False}

    def take(inv: Invariant) -> bool:
        """Note one invariant; False once the search must stop (time is up)."""
        if inv in seen:
            return True
        seen.add(inv)
        if not limit or len(kept) < limit:
            kept.append(inv)
        else:
            state["more"] += 1
        now = time.perf_counter()
        if progress is not None and now - state["shown"] >= PROGRESS_S:
            state["shown"] = now
            progress(f"searching: {len(seen)} fused invariants found in {now - start:.0f} s")
        if time_limit is not None and now - start >= time_limit:
            state["stopped"] = True
            return False
        return True

    if engine == "cpsat":
        from flamefuse.search.enumerate import enumerate_cpsat
        enumerate_cpsat(problem, on_found=take, time_limit=time_limit)
        complete = not state["stopped"] and (time_limit is None or time.perf_counter() - start < time_limit)
    else:
        complete = True
        if engine == "csp" and time_limit is not None:    # compiled: only a child process ends for sure
            from flamefuse.search.child import iterate_in_child
            found = iterate_in_child(engine, problem, start + time_limit)
        else:
            from flamefuse.search.brute import iterate_brute
            from flamefuse.search.csp import iterate_csp
            found = {"csp": iterate_csp, "brute": iterate_brute}[engine](problem)
        try:
            with _alarm(time_limit if engine == "brute" else None):
                for inv in found:
                    if not take(inv):
                        complete = False
                        break
        except (_TimeUp, TimeoutError):
            complete = False
        finally:
            close = getattr(found, "close", None)
            if close is not None:
                close()                         # a child process is killed at once
    sizes = [len(op.tasks) for op in with_const_tasks(problem).operations]
    kept.sort(key=lambda inv: sort_key(inv, sizes))
    return Found(kept, state["more"], complete, limit, time_limit)
