"""A pool of freed flat buffers, so loops that make a same-sized temporary each iteration reuse it.

A fresh large NumPy buffer is mapped from the OS, and its first write
page-faults every page (about as slow as writing it once more); a fused
kernel writing an 80 MB temporary would spend half its time there.
:func:`give` takes a dying base's buffer when nothing else can reach it (it
owns its memory and no view, NumPy array or memoryview refers to it) and it
is at least :data:`MIN_BYTES`; :func:`take` hands back a pooled buffer of the
same dtype and size, or a new one. The pool holds at most :data:`MAX_BYTES`,
dropping buffers of the sizes pooled first. ``STATS`` counts ``reused`` and
``allocated`` buffers. Threads: the pool changes under one lock; :func:`give` (called from
``__del__``, in any thread, at any allocation, even inside :func:`take`) never waits for it: a
buffer given while the lock is held is simply not pooled.
"""
from __future__ import annotations

import atexit
import sys
import threading
from collections import Counter

import numpy as np

MIN_BYTES = 1 << 18
MAX_BYTES = 1 << 30
STATS = Counter()
_FREE: dict = {}          # (dtype, size) -> [buffer, ...], oldest first (dtype.name is slow)
_HELD = [0]               # bytes held
_OPEN = [True]            # cleared at exit: bases dying at interpreter shutdown are not pooled
atexit.register(_OPEN.clear)
_LOCK = threading.Lock()


def take(size: int, dtype) -> np.ndarray:
    """A flat buffer of ``size`` elements of ``dtype`` (contents undefined)."""
    dtype = np.dtype(dtype)
    with _LOCK:
        free = _FREE.get((dtype, size))
        if free:
            buf = free.pop()
            if not free:
                del _FREE[(dtype, size)]
            _HELD[0] -= buf.nbytes
            STATS["reused"] += 1
            return buf
    STATS["allocated"] += 1
    return np.empty(size, dtype)


def give(buf) -> None:
    """Pool ``buf``, a dying object's buffer, if that object's reference is the only one left
    and ``buf`` owns its memory; else leave it alone."""
    # references: the dying object's, this frame's argument, getrefcount's argument
    if (not _OPEN or type(buf) is not np.ndarray or buf.base is not None or buf.nbytes < MIN_BYTES
            or buf.ndim != 1 or not buf.flags.writeable or sys.getrefcount(buf) > 3):
        return
    if not _LOCK.acquire(blocking=False):
        return
    try:
        _FREE.setdefault((buf.dtype, buf.size), []).append(buf)
        _HELD[0] += buf.nbytes
        for free in _FREE.values():
            while free and _HELD[0] > MAX_BYTES:
                _HELD[0] -= free.pop(0).nbytes
    finally:
        _LOCK.release()


def clear() -> None:
    """Drop every pooled buffer."""
    with _LOCK:
        _FREE.clear()
        _HELD[0] = 0
