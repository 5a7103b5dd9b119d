"""Cold kernels compile off the critical path: one detached, low-priority process builds them.

Why: a first run with an empty cache used to compile every fused kernel in the script's own
process before its first use (Numba's import about 0.5 s, each element-wise kernel 0.3-1 s, a
synthesized linear-algebra chain's search, derivation and compile 2-20 s): cold runs were 13-64x
slower than NumPy. With ``FLAMEFUSE_COMPILE=background`` (the default; :mod:`flamefuse.switches`;
``inline`` is the old behaviour, the test suite's setting) a kernel that is not built yet is
*wanted* instead, and its work runs the way NumPy would meanwhile:

* a flush whose plan needs a fused kernel with no native library
  (:func:`flamefuse.runtime.execute.run`) runs its operations one by one through NumPy
  (:mod:`flamefuse.runtime.numpy_program`: NumPy's results, warnings and errors) and wants the
  kernels (:func:`library`);
* a clustered filter loop (boolean masks, :mod:`flamefuse.runtime.filters`) whose native
  library is not built runs its recorded ops as NumPy's calls, writing the outputs the loop
  would store (:func:`flamefuse.runtime.filter_numpy.run`), and wants the library; a product
  group's loop nest likewise (:mod:`flamefuse.runtime.linalg`), and a compiled script loop
  (:mod:`flamefuse.loops.guard`);
* a chain of linear-algebra calls whose synthesized kernel is not in the cache, compiled for
  its argument types, runs as its LAPACK calls (:func:`flamefuse.synth.group.run_segment`)
  and wants the chain (:func:`want_chain`): the worker runs the same search of the chain's
  longest fused pieces, derives and emits their modules and compiles them for those types;
* a kernel that has no native form (:func:`flamefuse.sigcodes.signature` is None), or that
  was tried and cannot be built as a library (its ``.none`` marker), compiles inline as before.

**The worker.** Wanted work is written as a job (JSON of plain values: kernels as their
:meth:`Code.plain <flamefuse.runtime.code.Code.plain>` tuples and signature codes, chains as
buffers, steps and cuts, a chain kernel's library as its module's cache name and variant; data
that cannot run code) into the user's private cache folder (the
store's kind ``jobs``: stamped, trusted, written atomically), and ``python -m
flamefuse.synth.worker <job>`` is started at once (:func:`_start`: a new session, no
terminal, standard streams to ``/dev/null``, ``os.nice``): the first want of a run starts it,
wants made while it runs go to a second one started when it is done (at a later flush) or at the
process's exit (``atexit``). The script never waits for it and exits normally while it runs.
The worker (:mod:`flamefuse.synth.worker`) builds each kernel with :func:`flamefuse.runtime.native.build_one` (the same code
``flamefuse fuse`` used at exit), under an exclusive ``flock`` of ``jobs/<library>.lock`` so two
workers never build one library at once (the lock dies with its process); a kernel it cannot
build as a library is compiled into Numba's disk cache instead. A crash of the worker costs the
kernels it did not build (wanted again next run), never a result of the script.

**Pick-up.** While kernels are pending, a flush asks the disk whether they exist now at most
every :data:`CHECK_S` (a ``stat`` per pending kernel); from then on the plan's step calls the
library (the plan is kept, only the step's entry is found). A cold run in background mode never
imports Numba in the script's process.

``wait(timeout)`` waits for the workers this process started, and for any whose job is still
in the cache folder (another process's); ``flamefuse fuse --wait`` calls it after the script.
``STATS``: ``deferred_flushes`` (flushes run as NumPy while their kernels compile),
``deferred_loops`` and ``deferred_loop_ops`` (clustered filter loops run as NumPy's calls
meanwhile, and their ops), ``deferred_chains`` (linear-algebra chains run as LAPACK calls
meanwhile), ``deferred_groups``
(product groups run as NumPy's calls meanwhile), ``wanted`` (kernels
and chains handed to a worker), ``workers`` (processes started), ``picked_up`` (kernels a
running script found built).
"""
from __future__ import annotations

import atexit
import os
import sys
import time
from collections import Counter

from flamefuse import store, switches
from flamefuse.digest import sha256

CHECK_S = 0.05          # pending kernels are looked for on disk at most this often
STALE_S = 10.0          # a job file no worker holds after this long is an abandoned one
STATS = Counter()
INLINE = object()       # :func:`library`: this kernel compiles inline (no native form)
_PENDING: dict = {}     # (source, sig) -> True: wanted, not found built yet
_ITEMS: dict = {}       # key -> job item (JSON value), wanted and not handed to a worker yet
_HANDED: set = set()    # keys handed to a worker by this process
_PROCS: list = []       # the workers this process started (subprocess.Popen)
_LAST = [0.0]           # when the pending kernels were last looked for
_EXIT = []              # the atexit hand-over is registered


def background() -> bool:
    """Whether kernels compile in the background (``FLAMEFUSE_COMPILE``; a usable jobs folder)."""
    return switches.text("FLAMEFUSE_COMPILE") == "background" and store._folder("jobs") is not None


# -- the script's side -------------------------------------------------------------------------

def library(code, sig: tuple):
    """The native launcher of the fused kernel ``code`` for ``sig`` if it is built; :data:`INLINE`
    when it cannot be (compile it inline, as before); None while it is being compiled (it is
    wanted: the caller runs its work as NumPy would)."""
    from flamefuse.runtime import native
    key = (code.source, sig)
    if key in _PENDING:
        _refresh()
        if key in _PENDING:
            return None
    fn = native.find(code.source, sig)
    if fn is not None:
        return fn
    if native.cannot_build(code.source, sig):
        return INLINE
    _PENDING[key] = True
    _want(("kernel", code, sig))
    return None


def _refresh() -> None:
    """Look for the pending kernels' libraries on disk, at most every :data:`CHECK_S`."""
    now = time.monotonic()
    if now - _LAST[0] < CHECK_S:
        return
    _LAST[0] = now
    from flamefuse.runtime import native
    for source, sig in list(_PENDING):
        if native.built(source, sig) or native.cannot_build(source, sig):
            native.forget(source, sig)
            del _PENDING[(source, sig)]
            STATS["picked_up"] += 1
    if _ITEMS and not any(p.poll() is None for p in _PROCS):
        hand_over()             # wants made while the last worker ran: a new one


def want_chain(item: dict) -> None:
    """Want a linear-algebra segment synthesized and compiled (``item``: see
    :func:`flamefuse.synth.group.job_item`)."""
    _want(("chain", item))


def _plain(want) -> dict:
    if want[0] == "kernel":
        _, code, sig = want
        kind = {"NestCode": "nest", "ChainCode": "chain-library", "FilterCode": "filter",
                "LoopCode": "loop"}.get(type(code).__name__, "kernel")
        return {"kind": kind, "code": code.plain(), "sig": list(sig)}
    return {"kind": "chain", **want[1]}


def _item_key(item: dict) -> str:
    """A job item's key: the SHA-256 of its JSON (equal items, one key)."""
    import json                     # (a warm run wants nothing: no json imported)
    return sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()[:24]


def _want(want) -> None:
    item = _plain(want)
    key = _item_key(item)
    if key in _HANDED or key in _ITEMS:
        return
    _ITEMS[key] = item
    STATS["wanted"] += 1
    if not _EXIT:
        _EXIT.append(True)
        atexit.register(hand_over)
    if not any(p.poll() is None for p in _PROCS):
        hand_over()


def hand_over(extra=()) -> bool:
    """Hand every want not handed yet (and ``extra``: ``(code, sig)`` pairs,
    :data:`flamefuse.runtime.native._WANTED` at exit) to a new worker; True when one started."""
    for code, sig in extra:
        if sig is not None:
            item = _plain(("kernel", code, tuple(sig)))
            key = _item_key(item)
            if key not in _HANDED:
                _ITEMS.setdefault(key, item)
    if not _ITEMS:
        return False
    items, keys = list(_ITEMS.values()), list(_ITEMS)
    _ITEMS.clear()
    _HANDED.update(keys)
    name = f"job-{os.getpid()}-{sha256(''.join(keys).encode()).hexdigest()[:16]}"
    try:
        path = store.put_json("jobs", name, items)
        if path is None:
            return False
        return _start(path)
    except Exception:      # noqa: BLE001 -- no worker: the kernels are wanted again next run
        return False


def _start(path) -> bool:
    import subprocess
    try:
        proc = _worker_class()([sys.executable, "-m", "flamefuse.synth.worker", str(path)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                               env=_child_env())
    except OSError:
        return False
    _PROCS.append(proc)
    STATS["workers"] += 1
    return True


_WORKER: list = []


def _worker_class():
    """``subprocess.Popen`` for a worker, which outlives the script by design: collected at exit
    while it still runs, ``Popen.__del__`` would warn ``ResourceWarning: subprocess N is still
    running``, which the script's ``-W error`` or a filter list it left behind (Python reads the
    last one it saw once ``warnings`` is gone) turns into ``Exception ignored in ...`` on its
    stderr, where NumPy prints nothing."""
    if not _WORKER:
        import subprocess

        class Worker(subprocess.Popen):
            def __del__(self):
                pass
        _WORKER.append(Worker)
    return _WORKER[0]


def _child_env() -> dict:
    """The worker's environment: this one, with flamefuse importable as this process imports it
    (the worker itself compiles inline)."""
    env = dict(os.environ)
    env["FLAMEFUSE_COMPILE"] = "inline"
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def explain() -> list[str]:
    """``flamefuse fuse --explain``'s lines: what ran as NumPy while its kernel compiled."""
    g = STATS.get
    if not (g("deferred_flushes") or g("deferred_loops") or g("deferred_chains") or g("deferred_groups")
            or g("wanted")):
        return []
    return [f"background: {g('deferred_flushes', 0)} flushes ({g('deferred_ops', 0)} operations) ran as "
            f"NumPy, {g('deferred_loops', 0)} filter loops ({g('deferred_loop_ops', 0)} operations) as "
            f"NumPy's calls, {g('deferred_chains', 0)} linear-algebra chains as LAPACK calls and "
            f"{g('deferred_groups', 0)} product groups as NumPy's calls because their "
            f"kernels were compiling in the background; {g('wanted', 0)} kernels or chains handed to "
            f"{g('workers', 0)} compiler processes, {g('picked_up', 0)} picked up by this run once "
            "built (the next run uses them; flamefuse fuse --wait waits for them)"]


def pending() -> int:
    """Kernels wanted by this process and not found built yet."""
    return len(_PENDING)


_BUSY = [-1.0, False]       # when busy() last looked at the job files, and what it found


def busy() -> bool:
    """Is a background compile going on: kernels this process wants and has not found built
    yet, or a live job in the cache folder (another run's worker; looked for at most every
    :data:`CHECK_S`)? What a flush measures meanwhile shares the cores with the compiler
    (:func:`flamefuse.runtime.adapt.warm_seconds`)."""
    if _PENDING:
        return True
    now = time.monotonic()
    if now - _BUSY[0] >= CHECK_S:
        _BUSY[0] = now
        try:
            _BUSY[1] = bool(_live_jobs())
        except OSError:
            _BUSY[1] = False
    return _BUSY[1]


def wait(timeout: float | None = None) -> bool:
    """Wait for the background compiles: this process's workers, then any job still in the cache
    folder that a worker holds (or that was written less than :data:`STALE_S` ago). True when
    none is left, False at the timeout."""
    end = None if timeout is None else time.monotonic() + timeout
    if _ITEMS:
        hand_over()
    for proc in _PROCS:
        try:
            proc.wait(None if end is None else max(0.0, end - time.monotonic()))
        except Exception:      # noqa: BLE001 -- subprocess.TimeoutExpired
            return False
    while _live_jobs():
        if end is not None and time.monotonic() >= end:
            return False
        time.sleep(0.05)
    _LAST[0] = 0.0
    _refresh()
    return True


def _live_jobs() -> list:
    """The job files (``job-*.json``, as ``os.path`` strings: a fused run's flushes ask, through
    :func:`busy`, and importing ``pathlib`` for it cost about 4 ms where flamefuse is installed
    from a wheel: docs/startup.md) that a worker holds or that are recent."""
    folder = store._folder("jobs")
    if folder is None:
        return []
    live = []
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("job-") and name.endswith(".json")):
            continue
        f = os.path.join(folder, name)
        try:
            age = time.time() - os.stat(f).st_mtime
        except OSError:
            continue
        if age < STALE_S or _held(f):
            live.append(f)
    return live


def try_lock(path, create: bool = False):
    """A descriptor of ``path`` holding its exclusive ``flock``, or None when another process
    holds it; ``create``: the file is made (mode 0600) if missing. Opening it may raise
    ``OSError``."""
    import fcntl
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600) if create else os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _held(path) -> bool:
    """Does a worker hold the job file's lock?"""
    try:
        fd = try_lock(path)
    except OSError:
        return False
    if fd is None:
        return True
    os.close(fd)
    return False


# -- the worker's side -------------------------------------------------------------------------

def _lock(name: str):
    """An exclusive lock of ``jobs/<name>.lock`` (its descriptor), or None when another worker
    holds it."""
    folder = store.folder("jobs")
    if folder is None:
        return None
    return try_lock(folder / f"{name}.lock", create=True)
