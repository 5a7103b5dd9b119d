"""Kernels a script used last time, loaded in the background while it starts again.

Loading a cached Numba kernel costs 3-20 ms (its compiled code is read and linked for its
argument types) after Numba's own 0.45 s set-up, paid at the kernel's first call, inside the
script's run. ``flamefuse fuse`` remembers, per script (its path and text), the kernels whose
first call it saw and their argument types (`flamefuse.sigcodes.signature` codes):
``record(source, sig)`` (called by :func:`flamefuse.runtime.execute.run` at each first call)
and ``save(script)`` at the end write the store entry ``<cache>/scripts/<digest>.json``
(:mod:`flamefuse.store`, kind ``scripts``; JSON: a list of ``[source, [code, ...]]``; data that
cannot run code, read only when it is the user's own private file and stamped by this
version), only when the list differs from the one ``kernels`` read (a warm run writes nothing).
On the next run
``kernels(script)`` reads that list and ``start(kernels, set_up)`` loads those kernels for those
types in a thread while the script runs: their native libraries
(:mod:`flamefuse.runtime.native`, no Numba), and through Numba only those that have none and
would compile through Numba at their first call (compiling in the background, only those whose
library cannot be built: the others run as NumPy's calls meanwhile), so the script's first
calls find them ready.

No start-up work races the script: Numba's import and its one-time target set-up are not
thread-safe (two threads importing it at once get a half-initialised module; its compiler
lock and its target context's lock, taken in opposite orders, deadlocked), so when some kernel
has no library ``start`` calls ``set_up`` (Numba's import and set-up) in the calling thread,
before the loading thread exists, and the thread then only loads kernels (under Numba's
compiler lock, as any compilation; :func:`flamefuse.cache.load_module` imports a module once
however many threads ask). When every kernel has a library the thread never touches Numba,
and a warm run never imports it. A ``fork`` (``multiprocessing``) waits for the thread first,
so a child never inherits a lock it holds.

A missing, damaged or foreign file loads nothing; a kernel that fails to load is
skipped (its first call then compiles or loads it as before). ``FLAMEFUSE_PRELOAD=0``
(:mod:`flamefuse.switches`) turns both sides off.
"""
from __future__ import annotations

import _thread
import os

from flamefuse import store, switches
from flamefuse.digest import sha256

_SEEN: dict = {}          # kernel source -> set of argument signatures (sigcodes.signature codes)
_READ: dict = {}          # script's entry key -> the list read from it (save skips an unchanged list)
_THREADS: list = []       # loading threads started (a fork waits for them)


def enabled() -> bool:
    return switches.on("FLAMEFUSE_PRELOAD")


def _key(script) -> str | None:
    """The entry's key: a digest of the script's resolved path and text (None: unreadable);
    ``script`` a string or a ``Path`` (``os.path.realpath``: what ``Path.resolve`` gives, without
    importing ``pathlib`` in a warm fused run: docs/startup.md)."""
    try:
        with open(script, "rb") as f:
            text = f.read()
    except OSError:
        return None
    return sha256(os.path.realpath(script).encode() + b"\0" + text).hexdigest()[:32]


def _file(script):
    key = _key(script)
    return None if key is None else store.path("scripts", key, ".json")


def record(source: str, sig: tuple) -> None:
    """Note a kernel's first call: its source and its arguments' signature ``sig``."""
    if enabled():
        _SEEN.setdefault(source, set()).add(sig)


def save(script) -> None:
    """Write the kernels first called in this run for ``script`` (only those: a kernel an older
    run used and this one did not would be loaded, through Numba, at every later start)."""
    if not enabled() or not _SEEN:
        return
    key = _key(script)
    entries = [[src, list(sig)] for src in sorted(_SEEN) for sig in sorted(_SEEN[src])]
    if key is not None and _READ.get(key) != entries:   # a warm run's list is the one it read
        store.put_json("scripts", key, entries)
        _READ[key] = entries


def kernels(script) -> list:
    """``[(source, sig)]``: the kernels ``script`` used last time (none without a record)."""
    if not enabled():
        return []
    key = _key(script)
    entries = None if key is None else store.get_json("scripts", key)
    try:
        found = [(src, tuple(sig)) for src, sig in entries
                 if isinstance(src, str) and isinstance(sig, list) and all(isinstance(c, str) for c in sig)]
    except (ValueError, TypeError):  # not a list of pairs: nothing
        return []
    if len(found) == len(entries):
        _READ[key] = entries
    return found


def needs_numba(entries: list) -> bool:
    """Whether some kernel of ``entries`` has no native library and would load through Numba
    (:func:`_through_numba`)."""
    from flamefuse.runtime.kernel import jit_enabled
    return jit_enabled() and any(_through_numba(src, sig) for src, sig in entries)


def _through_numba(source: str, sig: tuple) -> bool:
    """A kernel with no native library that its first call would compile through Numba: any,
    compiling inline; compiling in the background (:mod:`flamefuse.runtime.compiler`), only
    one whose library cannot be built (the others run as NumPy's calls until the background
    compiler has built theirs, so loading them through Numba here would import Numba for
    nothing)."""
    from flamefuse.runtime import compiler, native
    if native.built(source, sig):
        return False
    return not compiler.background() or native.cannot_build(source, sig)


class Loading:
    """The loading thread :func:`start` started: ``join(timeout)`` waits for it to end,
    ``is_alive()``, ``ident``. Started with ``_thread.start_new_thread``, which returns at once:
    ``threading.Thread.start`` waits until the new thread runs, and a thread that then loads
    (Python code, holding the GIL) kept the caller waiting for the GIL for up to the switch
    interval (``sys.getswitchinterval``, 5 ms), inside the script's start-up (2-8 ms of wall
    time measured in go_fast's warm runs: docs/startup.md). Like a daemon thread, the
    interpreter does not wait for it at exit; a ``fork`` does (:func:`_wait_for_threads`)."""

    def __init__(self, work):
        self._running = _thread.allocate_lock()
        self._running.acquire()

        def run():
            try:
                work()
            finally:
                self._running.release()
        self.ident = _thread.start_new_thread(run, ())

    def is_alive(self) -> bool:
        return self._running.locked()

    def join(self, timeout: float | None = None) -> None:
        if self._running.acquire(timeout=-1 if timeout is None else timeout):
            self._running.release()


def start(entries: list, set_up=None, done=None) -> Loading | None:
    """Load ``entries`` in a daemon thread (None when there are none): their native libraries,
    and through Numba those that have none, after ``set_up()`` (Numba's import and set-up) has
    run here, in the calling thread. ``done(n)`` receives how many were loaded."""
    if not entries:
        return None
    numba = set_up is not None and needs_numba(entries)
    if numba:
        set_up()

    def work():
        n = load(entries, numba)
        if done is not None:
            done(n)
    thread = Loading(work)      # (returns at once: its doc)
    _THREADS.append(thread)
    return thread


def _wait_for_threads() -> None:
    for thread in _THREADS:
        if thread.ident != _thread.get_ident():
            thread.join()


if hasattr(os, "register_at_fork"):         # a child must not inherit a lock the thread holds
    os.register_at_fork(before=_wait_for_threads, after_in_child=_THREADS.clear)


def load(entries: list, numba: bool = True) -> int:
    """Load the kernels ``entries`` (:func:`kernels`); returns how many were loaded. Those with
    no native library load through Numba only when ``numba`` (Numba already set up)."""
    from flamefuse.runtime import native
    missing = [(src, sig) for src, sig in entries if native.find(src, sig) is None]
    done = len(entries) - len(missing)
    missing = [(src, sig) for src, sig in missing if _through_numba(src, sig)]
    if not numba or not missing:
        return done
    from flamefuse.runtime.kernel import compile_kernel
    for source, sig in missing:
        try:
            compile_kernel(source).compile(native.numba_types(sig))
        except Exception:          # noqa: BLE001 -- the first call will load or compile it
            continue
        done += 1
    return done
