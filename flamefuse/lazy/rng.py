"""``flamefuse.lazy.random``: NumPy's random functions and generators on lazy arrays.

A function or generator method gets lazy arguments as their memory, after a sync (so
``shuffle(a)`` and ``permuted(a, out=a)`` write into the lazy array, and later operations
see it), and its array results come back lazy (a view of an argument as a view of it),
so that what follows fuses. ``default_rng``, ``Generator`` and ``RandomState`` give
subclasses of NumPy's classes (:func:`_lazy_generator`): ``isinstance`` holds (SciPy's
``random_state=`` takes them) and, pickled, they are NumPy's.

``numpy.random`` is imported at the first use of ``random`` (NumPy 2 imports it lazily too:
10-20 ms a script that draws no random numbers does not pay), and the subclasses are made then.
"""
from __future__ import annotations

import functools

import numpy as np

from flamefuse.runtime import adapt
from flamefuse.lazy.array import adopt, lazy_arrays
from flamefuse.lazy.eager import numpy_result


class Random:
    """``random``: NumPy's random functions and generators, results wrapped lazily; its
    ``Generator`` and ``RandomState`` are :func:`_lazy_generator` subclasses."""

    def __getattr__(self, name):
        generators = _generators()
        if name in generators:
            return generators[name]
        attr = getattr(np.random, name)
        return _wrap_random(attr) if callable(attr) and not isinstance(attr, type) else attr


def _wrap_random(fn):
    """NumPy's random function or generator method ``fn`` on NumPy arrays: lazy arguments are
    passed as their memory after a sync (``shuffle(a)``, ``permuted(a, out=a)`` write into
    it), array results come back lazy (views of an argument as views of it), a generator as
    a :class:`_Generator`."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        r = numpy_result(fn, args, kwargs)         # (``rng.random(out=o) is o``)
        if type(r) is np.random.Generator:
            return _generators()["Generator"](r.bit_generator)
        if isinstance(r, np.ndarray):
            lazies = lazy_arrays((args, kwargs))
            if not lazies and adapt.STATE.numpy_sites and adapt.numpy_here():
                return r            # a site that runs as NumPy (flamefuse.runtime.adapt)
            return adopt(r, lazies)
        return r
    return call


def _lazy_generator(cls):
    """A subclass of NumPy's generator class ``cls`` (``isinstance`` holds, so SciPy's
    ``random_state=`` takes it; pickled, it is NumPy's) whose methods take and give lazy
    arrays (:func:`_wrap_random`): ``shuffle`` of a lazy array shuffles its memory as NumPy
    shuffles an ndarray (NumPy's own generator would take it for a sequence and swap rows
    that are views)."""

    class Lazy(cls):
        def __getattribute__(self, name):
            attr = super().__getattribute__(name)
            if name.startswith("_") or not callable(attr) or isinstance(attr, type):
                return attr
            return _wrap_random(attr)

    Lazy.__name__ = Lazy.__qualname__ = cls.__name__
    return Lazy


@functools.lru_cache(maxsize=1)
def _generators() -> dict:
    """The lazy subclasses of NumPy's ``Generator`` and ``RandomState``, made (and
    ``numpy.random`` imported) at the first use of ``random``."""
    return {"Generator": _lazy_generator(np.random.Generator),
            "RandomState": _lazy_generator(np.random.RandomState)}
