"""Plans: a partitioned, compiled program, cached by the program's structure (merge cache).

``plan_for(program, partitioner)`` returns a :class:`Plan` (blocks in
dependency order, one compiled kernel and argument list per block, the
contracted bases); equal programs (same ops, operand numbering by first use,
views, dtypes, fresh/dead flags) reuse the plan, so a loop body recorded each
iteration is partitioned and compiled once. ``run(plan, buffers, scalars)``
allocates (:func:`flamefuse.runtime.pool.take`) the flat buffers that are still
missing (``buffers[i] is None``) and not contracted, and calls the kernels with
each base's buffer reshaped to its :class:`~flamefuse.runtime.kernel.Grid`
(``ndview`` makes the NumPy view of one :class:`Ref`, for other executors).
``STATS`` counts plans built and reused and the seconds spent partitioning
(``partition_s``), generating and loading kernels (``compile_s``) and in each
kernel's first call, where Numba compiles or loads its cache (``first_call_s``).
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from flamefuse.runtime import graph as wsp
from flamefuse.runtime import pool
from flamefuse.runtime.kernel import Grid, Index, compile_kernel, generate
from flamefuse.runtime.partition import partition
from flamefuse.runtime.program import BaseInfo, Program, Ref

STATS = Counter()


class _ScalarTypes(dict):
    """dtype name -> NumPy scalar type, filled on first use (``np.dtype(name)`` per call is slow)."""

    def __missing__(self, name):
        self[name] = np.dtype(name).type
        return self[name]


SCALAR_TYPES = _ScalarTypes()
_U64 = np.uint64
_PLANS: dict = {}
WINDOW = 64      # ops partitioned together at most (see windows)
_WARM: set = set()


@dataclass(frozen=True)
class Step:
    kernel: object
    args: tuple
    source: str


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    gone: frozenset
    cost: int


def windows(program: Program, size: int) -> list[Program]:
    """``program`` cut into runs of ``size // 2`` to ``size`` consecutive ops, each a program over the
    same bases (a base is fresh in a run only if first accessed there, dead only if last
    accessed there). Partitions of the runs, in order, form a legal partition of the whole
    (a dependence between runs goes forward), and graph building and partitioning, quadratic
    and worse in the op count, stay fast on a long recording (a loop without a sync point)."""
    ops = program.ops
    if len(ops) <= size:
        return [program]
    first, last = {}, {}
    for i, op in enumerate(ops):
        for r in (op.out,) + op.refs_in():
            first.setdefault(r.base, i)
            last[r.base] = i
    # bases live across the cut after op i; cuts go where fewest cross (a loop's iteration
    # boundary, where only its carried arrays are live), so windows repeat the same structure
    delta = [0] * (len(ops) + 1)
    for k, f in first.items():
        delta[f] += 1
        delta[last[k]] -= 1
    crossing, running = [], 0
    for d in delta[:-1]:
        running += d
        crossing.append(running)
    out, lo = [], 0
    while lo < len(ops):
        hi = len(ops)
        if hi - lo > size:
            hi = 1 + min(range(lo + size // 2, lo + size), key=lambda i: (crossing[i], -i))
        out.append(Program(ops[lo:hi], tuple(
            BaseInfo(b.dtype, b.size, b.fresh and first.get(k, lo) >= lo, b.dead and last.get(k, hi) < hi)
            for k, b in enumerate(program.bases))))
        lo = hi
    return out


def build_plan(program: Program, partitioner: str) -> Plan:
    steps, gone, total = [], set(), 0
    for part in windows(program, WINDOW):
        t0 = time.perf_counter()
        g = wsp.build(part)
        blocks = partition(g, partitioner)
        t1 = time.perf_counter()
        for blk in blocks:
            dead = wsp.contracted(g, blk)
            gone |= dead
            k = generate(part, blk, dead)
            steps.append(Step(compile_kernel(k.source), k.args, k.source))
        total += wsp.cost(g, blocks)
        STATS["partition_s"] += t1 - t0
        STATS["compile_s"] += time.perf_counter() - t1
        STATS["blocks"] += len(blocks)
    return Plan(tuple(steps), frozenset(gone), total)


def plan_for(program: Program, partitioner: str) -> Plan:
    key = (program, partitioner)
    plan = _PLANS.get(key)
    if plan is None:
        STATS["plans_built"] += 1
        plan = _PLANS[key] = build_plan(program, partitioner)
    else:
        STATS["plan_hits"] += 1
    return plan


def ndview(flat: np.ndarray, ref: Ref) -> np.ndarray:
    v, item = ref.view, flat.itemsize
    if not v.shape:
        return np.ndarray((1,), flat.dtype, buffer=flat, offset=v.offset * item)
    return np.ndarray(v.shape, flat.dtype, buffer=flat, offset=v.offset * item,
                      strides=tuple(s * item for s in v.strides))


def run(program: Program, plan: Plan, buffers: list, scalars: list) -> None:
    for i, info in enumerate(program.bases):
        if buffers[i] is None and i not in plan.gone:
            buffers[i] = pool.take(info.size, info.dtype)
    for step in plan.steps:
        args = [(buffers[a.base] if len(a.shape) == 1 else buffers[a.base].reshape(a.shape))
                if type(a) is Grid else _U64(a.value) if type(a) is Index
                else SCALAR_TYPES[a.dtype](scalars[a.index]) for a in step.args]
        if step.kernel in _WARM:
            step.kernel(*args)
        else:
            t0 = time.perf_counter()
            step.kernel(*args)
            STATS["first_call_s"] += time.perf_counter() - t0
            _WARM.add(step.kernel)
