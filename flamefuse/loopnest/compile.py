"""``fuse_program``: analyse, colour, generate, compile; a callable :class:`Kernel`.

A :class:`Kernel` is the program, its generated code as a value
(:class:`flamefuse.loopnest.nestcode.NestCode`) and a function ``fn`` of the arguments in the
code's parameter order: the Numba kernel here, or any callable of the same arguments (the
run-time's product groups pass one that runs a native library when one was built:
:mod:`flamefuse.runtime.linalg`). The analysis, schedule and parallel plans are worked out
again only when asked for (``explain``), so a kernel made from stored code needs neither
OR-Tools nor Numba. Importing this module imports neither.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from flamefuse.errors import fail
from flamefuse.loopnest.ir import Program, validate
from flamefuse.loopnest.nestcode import UNROLL, NestCode


def _load(source: str):
    """The kernel of generated ``source``, kept in the user cache (:func:`flamefuse.cache.load_module`)."""
    from flamefuse.cache import load_module
    return load_module("loopnest", f"ff_loopnest_{hashlib.sha1(source.encode()).hexdigest()[:16]}", source)[0].kernel


@lru_cache(maxsize=256)
def analysed(program: Program, reorder_float: bool) -> tuple:
    """``(analysis, schedule, plans)`` of ``program`` (memoised)."""
    from flamefuse.loopnest.fcg import Loop, schedule
    from flamefuse.loopnest.parallel import plan
    from flamefuse.loopnest.reductions import analyse
    an = analyse(validate(program), reorder_float)
    sched = schedule(an)
    return an, sched, {k: plan(an, node) for k, node in enumerate(sched.roots) if isinstance(node, Loop)}


@dataclass(frozen=True)
class Kernel:
    """A compiled program.  Call with every ``in``/``inout`` array and scalar by
    name; returns ``{name: array}`` for the ``out`` and ``inout`` arrays."""
    program: Program
    reorder_float: bool
    code: NestCode
    fn: object

    @property
    def source(self) -> str:
        """The generated Numba module (:func:`flamefuse.loopnest.nestcode.njit_module`)."""
        return self.code.source

    @cached_property
    def _analysed(self) -> tuple:
        return analysed(self.program, self.reorder_float)

    @property
    def analysis(self):
        return self._analysed[0]

    @property
    def schedule(self):
        return self._analysed[1]

    @property
    def plans(self) -> dict:
        return self._analysed[2]

    def __call__(self, **values):
        p = self.program
        known = {a.name for a in p.arrays if a.role in ("in", "inout")} | set(p.scalars)
        extra = set(values) - known
        if extra:
            fail(f"unknown argument(s) {sorted(extra)}", hint=f"expected {sorted(known)}")
        params: dict[str, int] = {}
        args, writeback, result = {}, [], {}
        for a in p.arrays:
            if a.role not in ("in", "inout"):
                continue
            if a.name not in values:
                fail(f"missing array {a.name!r}")
            given = np.asarray(values[a.name])
            _bind_shape(a, given.shape, params)
            arr = np.ascontiguousarray(given, dtype=a.dtype)
            if a.role == "inout":
                if arr is not given and not np.shares_memory(arr, given):
                    writeback.append((given, arr))
                result[a.name] = given
            args[a.name] = arr
        for a in p.arrays:
            if a.role in ("in", "inout"):
                continue
            unknown = [b.param for b in a.shape if b.param and b.param not in params]
            if unknown:
                fail(f"size {unknown[0]} of {a.name} is not fixed by an input array's shape")
            shape = tuple(b.value(params) for b in a.shape)
            args[a.name] = np.empty(shape, a.dtype) if a.fill is None else np.full(shape, a.fill, a.dtype)
            if a.role == "out":
                result[a.name] = args[a.name]
        args = {k: v.reshape(1) if v.ndim == 0 else v for k, v in args.items()}
        for s in p.scalars:
            if s not in values:
                fail(f"missing scalar {s!r}")
            args[s] = values[s]
        args.update((k, np.int64(v)) for k, v in params.items())
        self.fn(*(args[n] for n in self.code.params))
        for given, arr in writeback:
            given[...] = arr
        return result

    def explain(self) -> str:
        """The schedule, the parallel loops and the reasons for every cut."""
        return describe(self.analysis, self.schedule, self.plans)


def _bind_shape(decl, shape, params) -> None:
    if len(shape) != len(decl.shape):
        fail(f"array {decl.name} must have {len(decl.shape)} dimensions, got {len(shape)}")
    for b, n in zip(decl.shape, shape):
        want = n - b.const
        if b.param is None:
            if n != b.const:
                fail(f"array {decl.name}: extent {n} where {b.const} is required")
        elif params.setdefault(b.param, want) != want:
            fail(f"array {decl.name}: size {b.param} = {want} here but {params[b.param]} elsewhere")


def describe(an, sched, plans: dict) -> str:
    from flamefuse.loopnest.fcg import Loop
    from flamefuse.loopnest.reductions import NotReduction
    p = an.program
    lines = []

    def walk(node, depth):
        pad = "  " * depth
        if isinstance(node, Loop):
            members = ", ".join(f"{p.statements[s].name}.{p.statements[s].dims[d]}"
                                for s, d in node.members)
            lines.append(f"{pad}loop {node.level} over {node.extent}: {members}")
            for c in node.body:
                walk(c, depth + 1)
        else:
            lines.append(f"{pad}{p.statements[node.statement].name}")

    for k, root in enumerate(sched.roots):
        walk(root, 0)
        pl = plans.get(k)
        if pl is not None:
            priv = ", ".join(p.statements[s].name for s in pl.private)
            lines.append("  -> parallel" + (f", privatised reductions: {priv}" if priv else "")
                         if pl.parallel else f"  -> sequential: {pl.reason}")
    for k, r in enumerate(an.reductions):
        name = p.statements[k].name
        lines.append(f"{name}: " + (f"not a reduction ({r.reason})" if isinstance(r, NotReduction)
                                     else f"reduction {r.op}" + ("" if r.reorderable else
                                                                 " (not reorderable: float)")))
    lines += sched.explain(p)
    return "\n".join(lines)


@lru_cache(maxsize=256)
def fuse_program(program: Program, reorder_float: bool = False, unroll: int = UNROLL) -> Kernel:
    """Analyse ``program``, colour its fusion conflict graph, generate and compile
    the fused Numba kernel.  ``reorder_float`` lets floating-point + and *
    reductions be reassociated (parallel partial sums, vectorised sums).
    ``unroll`` rows of a parallel two-deep nest share one pass over the inner
    loop (unroll-and-jam; 1 turns it off).  Memoised per (program, flag,
    unroll): a front end may call it for every block."""
    from flamefuse.loopnest.codegen import nest_code
    an, sched, plans = analysed(program, reorder_float)
    code = nest_code(an, sched, plans, unroll)
    return Kernel(an.program, reorder_float, code, _load(code.source))
