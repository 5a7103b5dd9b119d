"""Whether a parallel kernel's chunks are worth the thread team, or run on the calling thread.

A parallel native kernel (:mod:`flamefuse.runtime.native`) runs its chunks on the team's
:data:`~flamefuse.runtime.kernel.CHUNKS` threads. Waking the team and joining it costs about
13 us per launch (measured 2026-11-26 on the 2-core development machine: ``team.run`` of a
Python no-op 12.8 us, under load 1.2), while a cheap element-wise kernel runs about four
elements a nanosecond: ``S + R`` at 250 x 250 took 15 us on one thread and 30 us on the team
(NumPy: 13 us). So a kernel whose whole serial run is estimated below :data:`SERIAL_BELOW_NS`
(four times that fixed cost, so the team, at best ``1 - 1/CHUNKS`` faster, would not win
clearly) is launched on the calling thread only (``launch.serial``).

The results are the same bits either way: the chunk structure is the kernel's own (a function
of its extents, :data:`flamefuse.runtime.kernel.SPLIT`), never of the thread count; the serial
launch runs every chunk in order, then the combining step, as the team's shares do.

The estimate (:func:`serial_ns`) is the kernel's iteration count (the product of its loop
extents, read from the chunk's loop headers: the outer extent ``Code.extent``, each inner
``range(nK)`` or segmented ``while cD < nK``) times a per-iteration cost: :data:`ITER_NS` plus
:data:`CALL_NS` for each math-library call in the loop body (``np.exp(`` ... ; a conversion
``np.float64(`` is not one): ``exp(s) * sin(r)`` at 250 x 250 took about 1.4 ms on one thread,
about 11 ns per call per element. The decision is made once per plan step, at its first call
(:func:`flamefuse.runtime.execute._first_call`): a step's extents are fixed in its plan.

A product group's loop nest (:mod:`flamefuse.runtime.linalg`: matrix-vector products reading
one matrix) is estimated by :func:`nest_serial` from its arrays' elements (each read about
once, :data:`ITER_NS` each), decided at the kernel's first call; its serial launch runs every
root's fixed shares (:data:`flamefuse.loopnest.nestcode.SHARES`) in order, then combines them
in share order, as the team does.
"""
from __future__ import annotations

SERIAL_BELOW_NS = 50_000.0      # estimated serial run below this: the calling thread only
ITER_NS = 0.25                  # one iteration of a cheap element-wise body (SIMD loop)
CALL_NS = 11.0                  # one math-library call (exp, sin, log, ...) per iteration
# the estimate's regular expressions, compiled at its first use (not in the start-up of every
# fused run, which imports this module: about 0.3 ms)
_INNER = r"(?:\brange\(|\bwhile c\d+ < )(n\d+)\)?"
_CALL = r"\bnp\.([a-z][a-z0-9_]*)\("
_CHEAP = (r"^(?:u?int\d+|float\d+|bool_|complex\d+|isnan|isinf|isfinite|sign|fabs|floor|ceil|"
          r"trunc|rint|maximum|minimum|fmax|fmin|copysign|sqrt|reciprocal|deg2rad|rad2deg)$")
_COMPILED: list = []


def _patterns():
    """``(inner, call, cheap)``: the three expressions above, compiled once."""
    if not _COMPILED:
        import re
        _COMPILED.extend(re.compile(p) for p in (_INNER, _CALL, _CHEAP))
    return _COMPILED


def serial_ns(code, values: dict) -> float | None:
    """The estimated run time (ns) of ``code`` (a :class:`~flamefuse.runtime.code.Code`) on one
    thread, ``values`` its extent parameters' values by name; None when its loops are not
    understood (the team is kept)."""
    if code.extent is None or code.extent not in values:
        return None
    inner, call, cheap = _patterns()
    names = {code.extent} | set(inner.findall("\n".join(code.chunk)))
    iters = 1
    for name in names:
        if name not in values:
            return None
        iters *= int(values[name])
    calls = sum(1 for m in call.finditer("\n".join(code.chunk)) if not cheap.match(m.group(1)))
    return iters * (ITER_NS + CALL_NS * calls)


def serial(code, args) -> bool:
    """Whether the parallel kernel ``code``, called with ``args`` (its parameters' values, in
    order), runs on the calling thread only (its estimated serial time is below
    :data:`SERIAL_BELOW_NS`)."""
    if not code.parallel:
        return True
    values = {p: a for p, a in zip(code.params, args) if p.startswith("n")}
    est = serial_ns(code, values)
    return est is not None and est < SERIAL_BELOW_NS


def nest_serial(args) -> bool:
    """Whether a loop nest called with ``args`` runs on the calling thread only: its arrays'
    elements (each read about once) at :data:`ITER_NS` each below :data:`SERIAL_BELOW_NS`."""
    return sum(a.size for a in args if hasattr(a, "size") and getattr(a, "ndim", 0)) * ITER_NS \
        < SERIAL_BELOW_NS
