"""The one way into Numba: every function flamefuse compiles, and every import of Numba, goes here.

Importing Numba costs about 0.2 s (and 0.3 s more to set its CPU target up), so nothing here
imports it before it is needed: ``import flamefuse.lazy`` and a warm ``flamefuse fuse`` run
that loads native libraries never do.

``numba() -> module``
    Numba itself, imported at the first call.
``njit(fn, *, cache=True, **options) -> dispatcher``
    ``numba.njit(**options)(fn)`` now; with ``cache`` (the default) its disk cache entries are
    checked and healed (:func:`flamefuse.numba_cache.cached_njit`: an unreadable or foreign
    entry is a miss, an unwritable folder no disk cache).
``later(**options)``
    A decorator: ``@later(cache=True, nogil=True)`` is :func:`njit` deferred to the first call,
    so importing the module that defines the function does not import Numba.
``heal_module(module) -> module``
    Heal the disk cache of every Numba function of a generated module that its own source
    compiled with ``@njit(cache=True)`` (:func:`flamefuse.cache.load_module`).
``runtime_threads()``
    Before the first run-time kernel (:mod:`flamefuse.runtime.kernel`): Numba's thread pool is
    ``workqueue`` unless the user chose one (``NUMBA_THREADING_LAYER``). Every run-time kernel
    splits its outer loop into at most ``SPLIT`` chunks itself, and on the shared 2-core machine
    an OpenMP launch took 7.8 ms (a sleeping pool's wake-up) where workqueue's took 0.07 ms, for
    the same kernel (Gauss elimination's update). workqueue does not allow parallel kernels
    launched from two Python threads at once: it is chosen only for the run-time kernels'
    process (loop nests and Dask tiles, which run kernels from several threads, keep Numba's
    own choice).
``set_up_target()``
    Numba imported, :func:`runtime_threads` chosen and its CPU target set up (its registries:
    about 0.3 s), in the calling thread (``flamefuse fuse`` does it in a background thread while
    the script starts).

Generated module text (run-time kernels, loop nests, clusters, the block-algorithm modules)
says ``from numba import njit`` itself: it is Numba's input, loaded through
:func:`flamefuse.cache.load_module` (which heals it here); :mod:`flamefuse.numba_cache` imports
Numba itself because its source is copied into the generated block-algorithm modules, which
import nothing from flamefuse. The native backend (:mod:`flamefuse.runtime.native`) takes Numba's
types and ``cfunc`` to build C-ABI libraries.
"""
from __future__ import annotations

import functools
import os

__all__ = ["heal_module", "later", "njit", "numba", "runtime_threads", "set_up_target"]

_THREADS_CHOSEN: list = []


def numba():
    import numba as module
    return module


def njit(fn, *, cache: bool = True, **options):
    if cache:
        from flamefuse.numba_cache import cached_njit
        return cached_njit(fn, **options)
    return numba().njit(**options)(fn)


def later(**options):
    def wrap(fn):
        compiled = []

        @functools.wraps(fn)
        def call(*args):
            if not compiled:
                compiled.append(njit(fn, **{"cache": False, **options}))
            return compiled[0](*args)
        return call
    return wrap


def heal_module(module):
    from flamefuse.numba_cache import heal
    dispatcher = numba().core.dispatcher.Dispatcher
    for value in list(vars(module).values()):
        if isinstance(value, dispatcher):
            heal(value)
    return module


def runtime_threads() -> None:
    if _THREADS_CHOSEN:
        return
    nb = numba()
    if "NUMBA_THREADING_LAYER" not in os.environ:
        nb.config.THREADING_LAYER = "workqueue"
    _THREADS_CHOSEN.append(True)


def set_up_target() -> None:
    runtime_threads()
    from numba.core import compiler_lock
    from numba.core.registry import cpu_target
    with compiler_lock.global_compiler_lock:
        cpu_target.target_context.refresh()
