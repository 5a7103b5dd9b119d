"""The recorder: pending operations on base arrays, flushed as fused kernels at sync points.

A :class:`Base` is a flat buffer (``data``, allocated when first needed) with
a count of the lazy arrays that refer to it; ``live == 0`` at a flush means
its Python objects died (the array is freed, and contracted if it is a
temporary). ``RECORDER`` is the process-wide recorder: ``record`` appends an
operation, ``flush`` numbers the pending operations into a
:class:`~flamefuse.runtime.program.Program`, gets its plan (merge cache) and
runs it. ``STATS`` counts operations recorded, eager, flushes, fallbacks and
external calls; ``FALLBACKS`` counts fallbacks by operation name.
"""
from __future__ import annotations

import os
import time
import warnings
from collections import Counter

from flamefuse.runtime.execute import plan_for, run
from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar

STATS = Counter()
FALLBACKS = Counter()


class FallbackWarning(UserWarning):
    """An operation flamefuse.lazy does not fuse ran eagerly in NumPy."""


class Base:
    __slots__ = ("dtype", "size", "data", "live")

    def __init__(self, dtype, size: int, data=None):
        self.dtype, self.size, self.data, self.live = dtype, size, data, 0


class Recorder:
    def __init__(self):
        self.ops: list = []
        self.touched: dict[int, Base] = {}
        self.partitioner = os.environ.get("FLAMEFUSE_PARTITIONER", "greedy")
        self.eager_below = int(os.environ.get("FLAMEFUSE_EAGER_BELOW", 1 << 15))
        self.max_ops = 2000

    def concrete(self, base: Base) -> bool:
        return base.data is not None and id(base) not in self.touched

    def record(self, kind, name, out, ins, shape, loop, axis=None) -> None:
        """Append one op; ``out`` and array ``ins`` are ``(Base, View)``, scalars ``(value, dtype)``."""
        for x in (out,) + tuple(ins):
            if isinstance(x[0], Base):
                self.touched[id(x[0])] = x[0]
        self.ops.append((kind, name, out, tuple(ins), shape, loop, axis))
        STATS["recorded"] += 1
        if len(self.ops) >= self.max_ops:
            self.flush()

    def flush(self) -> None:
        if not self.ops:
            return
        t0 = time.perf_counter()
        numbers, bases, scalars, ops = {}, [], [], []

        def ref(x):
            if isinstance(x[0], Base):
                if id(x[0]) not in numbers:
                    numbers[id(x[0])] = len(bases)
                    bases.append(x[0])
                return Ref(numbers[id(x[0])], x[1])
            scalars.append(x[0])
            return Scalar(len(scalars) - 1, x[1])
        for kind, name, out, ins, shape, loop, axis in self.ops:
            ins = tuple(ref(x) for x in ins)
            ops.append(Op(kind, name, ref(out), ins, shape, loop, axis))
        program = Program(tuple(ops), tuple(
            BaseInfo(b.dtype.name, b.size, b.data is None, b.live == 0) for b in bases))
        self.ops, self.touched = [], {}
        plan = plan_for(program, self.partitioner)
        buffers = [b.data for b in bases]
        run(program, plan, buffers, scalars)
        for b, buf in zip(bases, buffers):
            b.data = buf
        STATS["flushes"] += 1
        STATS["flush_s"] += time.perf_counter() - t0


RECORDER = Recorder()


def note_fallback(name: str) -> None:
    FALLBACKS[name] += 1
    STATS["fallbacks"] += 1
    warnings.warn(f"flamefuse.lazy: {name} is not fused; it ran eagerly in NumPy",
                  FallbackWarning, stacklevel=4)
