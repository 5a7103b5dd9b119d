"""The ``time`` module as a fused script sees it: reading a clock runs the pending operations first.

Under ``flamefuse fuse`` NumPy operations are recorded and run at the next sync point. A script
that times a region (``t0 = time.perf_counter(); r = kernel(x); ...; time.perf_counter() - t0``)
would otherwise be charged for work recorded before ``t0`` (its set-up, still pending) and
credited with work recorded inside the region but run after it. A clock read is therefore a
sync point, as a device synchronisation is before a GPU timer: :func:`module` is the ``time``
module with its clocks (:data:`CLOCKS`) wrapped to call ``flush`` before reading. Everything else
(``sleep``, ``strftime``, ...) is the real module's. Only the script's own ``import time`` sees
it (:func:`flamefuse.cli.fuse._importer`); flamefuse's own modules read the real clocks.

A pending operation's errors (a deferred ``FloatingPointError`` under ``np.errstate``, for
one) are raised at that flush, as at any other sync point.
"""
from __future__ import annotations

import time as _time
import types
from typing import Callable

CLOCKS = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
          "process_time", "process_time_ns", "thread_time", "thread_time_ns")


def _synced(clock: Callable, flush: Callable[[], None]) -> Callable:
    def read():
        flush()
        return clock()
    read.__name__ = read.__qualname__ = clock.__name__
    read.__doc__ = clock.__doc__
    return read


def module(flush: Callable[[], None]) -> types.ModuleType:
    """A copy of the ``time`` module whose clocks call ``flush()`` before reading."""
    mod = types.ModuleType("time", _time.__doc__)
    mod.__dict__.update({k: v for k, v in vars(_time).items() if not k.startswith("__")})
    for name in CLOCKS:
        clock = getattr(_time, name, None)
        if clock is not None:
            setattr(mod, name, _synced(clock, flush))
    return mod
