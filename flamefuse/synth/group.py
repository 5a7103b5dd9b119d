"""Run one group of recorded linear-algebra calls: match, fuse, run, hand results back.

``run_group(ops, later)`` takes the recorded ``("linalg", Call, out, ins, ...)``
operations of one stage (:func:`flamefuse.synth.run.run_group`) (in program order) and the ids of bases read after
it. Each call is translated, by the structure its operands are known to have,
into library operations on *buffers* (Fortran-ordered matrices, vectors):

* ``cholesky(A)``: ``chol`` on a copy of A's lower triangle (of A^T for SciPy's
  ``lower=False``, whose result is then read transposed), or on A itself when it is dead;
* ``inv(M)``: ``trinv`` when M is lower or upper triangular (a Cholesky
  factor, or a checked one from outside: into a new buffer when M is still
  needed, in place when it is dead); ``chol -> trinv -> ltl`` when M is
  symmetric (made so in the chain, or checked), the general inverse
  ``lu -> trinv_unit -> triuinv -> ul`` (then A := A P) otherwise or when
  that Cholesky fails;
* ``L.T @ L`` with L lower: ``ltl``; ``X.T @ X``: the BLAS syrk (half of gemm's flops)
  computing only the lower triangle, which stands for the whole (mirrored only where the
  script sees the result); a product with an exact identity factor (``np.identity(n) @ P``):
  a copy of the other factor when it is finite; other products: one gemm through NumPy's
  matmul on the operands' storage as it is (no copies, the result C-ordered as NumPy's, the
  layout its recorded view reads: :meth:`Group.put_value`);
* ``solve_triangular`` / ``solve`` of a triangular M: ``trsm`` or ``trsm_lt``
  on the triangle M's storage holds; ``cho_solve``: ``trsm -> trsm_lt``;
  ``solve`` of a symmetric M: ``chol -> trsm -> trsm_lt`` (LU on failure),
  of a general one ``lu -> trsm_unit`` then U X = Y;
* ``lu_factor``: ``lu`` (pivots into the call's pivot array);
  ``lu_solve`` of factors made in the open chain: ``trsm_unit`` then U X = Y.

Consecutive library operations form one open chain (a :class:`Segment`).
A value is overwritten in place only when it is dead: made in this group,
no lazy array refers to it and nothing later reads it; otherwise it is
copied, which closes the chain first when the open chain is still writing
it. A value is forgotten as soon as its last reader is translated
(:meth:`Group.release`), so a chain of products ``Q = Q @ P`` holds two
matrices at a time, as NumPy does, not every intermediate (fresh memory for
each result cost a page-fault pass per product). A closed chain runs as its longest prefixes (at call boundaries) that
have a fused invariant, each as one derived kernel
(:func:`flamefuse.synth.kernels.fused`); a call whose own operations cannot
be derived, and anything not matched, runs as the script's own NumPy/SciPy
call (``Call.eager``). Results the script still refers to get NumPy's
form: zeros above a triangular factor, the upper triangle of a symmetric
result filled in. Each chain adds one ``linalg:`` line to
:data:`flamefuse.synth.explain.LINES`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flamefuse.synth import explain
from flamefuse.synth.chain import Buffer, Step
from flamefuse.synth.kernels import Fused, NotFused, fused
from flamefuse.synth.segment import Segment, _chain, _units, worth_fusing

FLOATS = ("float32", "float64")
# the chains run, in order: (their --explain line, whether they ran as LAPACK calls only: None while
# their kernel compiles in the background); cleared
# by whoever reads it (flamefuse.synth.direct learns the plan of a lone call from it)
RUNS: list = []
LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ"
PER_CALL = 4        # the most buffers one call's translation adds to the open chain


@dataclass(eq=False)
class Val:
    """A value of the group: ``arr`` (the buffer; the value is ``arr.T`` when ``t``: for a
    recorded result, relative to its base's column-major layout), its
    ``form`` (lower: only the lower triangle of ``arr`` is valid; symmetric: the lower triangle
    stands for the whole; full), whether this group allocated it, and its open-chain buffer."""
    arr: np.ndarray
    t: bool = False
    form: str = "full"
    private: bool = False

    def value(self) -> np.ndarray:
        """The value as the script sees it (the triangle filled in first)."""
        finalize(self)
        return self.arr.T if self.t else self.arr


def finalize(v: Val) -> None:
    if v.form != "full" and v.arr.ndim == 2 and v.arr.shape[0] > 1:
        from flamefuse.synth.fill import fill_upper
        fill_upper(v.arr, v.form == "symmetric")
    v.form = "full"


class Group:
    def __init__(self, ops, later):
        self.ops, self.later, self.env = ops, later, {}
        self.last_read = {}
        for i, op in enumerate(ops):
            for x in op.ins:
                self.last_read[id(x[0])] = i
        self.seg = Segment()

    # -- values
    def val(self, x) -> Val:
        base, view = x
        v = self.env.get(id(base))
        if v is not None:
            if _whole(view, v.arr):
                return v
            if _whole(view, v.arr, transposed=True):
                return Val(v.arr, not v.t, v.form, v.private)
            self.ensure_done(v)                 # a slice of a value made here: the whole value
            finalize(v)
            base.data = v.arr.reshape(-1, order="F")
        if base.data is None:
            base.data = np.zeros(base.size, base.dtype)
        flat = base.data
        arr = np.ndarray(view.shape, flat.dtype, buffer=flat, offset=view.offset * flat.itemsize,
                         strides=tuple(s * flat.itemsize for s in view.strides))
        return Val(arr)

    def dead(self, i: int, x) -> bool:
        base = x[0]
        v = self.env.get(id(base))
        return (v is not None and v.private and base.live == 0 and id(base) not in self.later
                and self.last_read.get(id(base)) == i)

    def release(self, i: int) -> None:
        """Forget the values op ``i`` read for the last time and the script can no longer see,
        so their memory is freed (and reused by the next result, as in plain NumPy) before the
        group ends; a value a buffer of the open chain holds stays alive there."""
        for x in self.ops[i].ins:
            if self.dead(i, x):
                self.env.pop(id(x[0]), None)

    def name_of(self, arr) -> str | None:
        """The open chain's name of buffer ``arr`` (the same memory, shape and strides: two views
        of one base made by two calls are one buffer), if it has one."""
        key = _memory(arr)
        for name, a in self.seg.buffers.items():
            if a is arr or _memory(a) == key:
                return name
        return None

    def pending(self, v: Val) -> bool:
        name = self.name_of(v.arr)
        return name is not None and name in self.seg.written

    def ensure_done(self, v: Val) -> None:
        if self.pending(v):
            self.close("its result is read before the chain ends")

    # -- buffers of the open chain
    def make_room(self) -> None:
        """Close the open chain before a call when it has fewer buffer names left than one
        call may add (:data:`PER_CALL`): a group of many calls that share no buffer (a list of
        solves, each copying its operands) ran out of names mid-call and raised IndexError."""
        if len(self.seg.buffers) > len(LETTERS) - PER_CALL:
            self.close("the chain has no more buffer names")

    def _add(self, arr, spec_kind, structure) -> str:
        name = LETTERS[len(self.seg.buffers)]
        self.seg.buffers[name] = arr
        self.seg.specs[name] = Buffer(name, spec_kind, structure)
        return name

    def own(self, i: int, x, v: Val, flip: bool, structure: str, kind: str = "matrix") -> tuple[str, Val]:
        """A writable buffer of the open chain holding ``v`` (transposed when ``flip``): ``v``'s own
        when it is dead and needs no transposition, else a Fortran-ordered copy."""
        t = v.t != flip
        if self.dead(i, x) and (not t or v.form == "symmetric") and v.arr.ndim == (1 if kind == "vector" else 2):
            name = self.name_of(v.arr)
            if name is None:
                name = self._add(v.arr, kind, structure)
            if self.seg.specs[name].kind == kind:
                return name, Val(v.arr, False, v.form, True)
        if self.pending(v):
            self.close("a result still referenced by the script is copied")
        value = v.value() if not (v.form == "symmetric" and t) else v.arr
        src = value.T if flip and not (v.form == "symmetric" and t) else value
        arr = np.array(src, dtype=src.dtype, order="F") if src.ndim == 2 else np.array(src)
        name = self._add(arr, kind if src.ndim == 2 else "vector", structure)
        return name, Val(arr, False, "full", True)

    def use_lower(self, v: Val, structure: str = "lower") -> str:
        """A buffer of the open chain whose lower triangle is v's stored lower triangle (read only)."""
        name = self.name_of(v.arr)
        if name is not None and self.seg.specs[name].kind == "matrix":
            return name
        arr = v.arr
        if not arr.flags.f_contiguous or not arr.flags.writeable or arr.dtype != arr.dtype.newbyteorder("=") \
                or any(np.may_share_memory(arr, a) for a in self.seg.buffers.values()):
            arr = np.array(arr, order="F")      # a kernel's operands never overlap
        return self._add(arr, "matrix", structure)

    def empty_like(self, v: Val, structure: str) -> tuple[str, np.ndarray]:
        arr = np.empty(v.arr.shape, v.arr.dtype, order="F")
        return self._add(arr, "matrix", structure), arr

    def steps(self, call, steps, finish=()) -> None:
        first = len(self.seg.steps)
        for op, binds in steps:
            self.seg.steps.append(Step(op, tuple(binds)))
            self.seg.written.add(binds[-1][1] if op in ("trsm", "trsm_lt", "trsm_unit") else binds[0][1])
            if op == "trinv" and len(binds) == 2:
                self.seg.written.add(binds[1][1])
        self.seg.calls.append((call, first, len(steps), tuple(finish)))
        if finish:
            self.close("")

    # -- running a chain
    def close(self, why: str) -> None:
        seg, self.seg = self.seg, Segment()
        if not seg.steps:
            return
        run_segment(seg, why)

    def eager(self, i: int, call, vals) -> None:
        for v in vals:
            self.ensure_done(v)
        result = call.eager(*[v.value() for v in vals])
        explain.add(f"linalg: {call.name} ran as NumPy/SciPy ({explain.shape_of(vals)})")
        out = result[0] if isinstance(result, tuple) else result
        self.put_value(i, out)
        if call.extra:
            self.env[id(call.extra[0][0])] = Val(np.ascontiguousarray(result[1]), private=True)

    def put(self, i: int, arr, t: bool, form: str) -> Val:
        base = self.ops[i].out[0]
        v = Val(arr, t, form, True)
        self.env[id(base)] = v
        return v

    def transposed_out(self, i: int) -> bool:
        """Does op ``i``'s recorded result view read its base's column-major matrix transposed
        (a C-ordered product, an upper Cholesky factor)? Its buffer then holds the value's
        transpose."""
        view = self.ops[i].out[1]
        if len(view.shape) != 2 or view.offset or view.wrap:
            return False
        n, m = view.shape
        return _strided(view, (m, 1)) and not _strided(view, (1, n))

    def put_value(self, i: int, value: np.ndarray, form: str = "full") -> Val:
        """Op ``i``'s result ``value`` (any layout) stored as its recorded view reads it: the
        value, or its transpose for a transposed view, Fortran-ordered (a copy only where
        ``value`` is not laid out so already: give a C-ordered value to a transposed view)."""
        arr = value.T if self.transposed_out(i) else value
        if not arr.flags.f_contiguous:
            arr = np.asfortranarray(arr)
        return self.put(i, arr, False, form)

    def finish(self) -> None:
        self.close("")
        for op in self.ops:
            outs = (op.out,) + tuple(op.name.extra)
            for base, _ in outs:
                v = self.env.get(id(base))
                if v is None or (base.live == 0 and id(base) not in self.later):
                    continue
                finalize(v)
                arr = np.asfortranarray(v.arr.T) if v.t else v.arr
                if arr.dtype != base.dtype:
                    arr = arr.astype(base.dtype, order="F")
                base.data = _flat(arr)


def fortran_buffer(shape, dtype) -> np.ndarray:
    """A new Fortran-ordered matrix (contents undefined) over a flat buffer of the run-time's pool
    (:mod:`flamefuse.runtime.pool`): a buffer a dead base gave back is reused instead of mapping
    fresh memory, whose first write page-faults every page (0.3-0.4 ms per 8 MB at n = 1000);
    :func:`_flat` hands the flat buffer itself to the result's base, so it goes back to the pool
    when the script drops the result."""
    from flamefuse.runtime import pool
    n = int(np.prod(shape))
    return pool.take(n, dtype).reshape(shape, order="F")


def _flat(arr: np.ndarray) -> np.ndarray:
    """The flat column-major data of ``arr``: the buffer it is the whole of when it owns one (one
    from :func:`fortran_buffer`: the pool takes it back from a dying base), else a reshaped view."""
    owner = arr.base
    if isinstance(owner, np.ndarray) and owner.ndim == 1 and owner.flags.owndata and owner.size == arr.size \
            and owner.dtype == arr.dtype and arr.flags.f_contiguous \
            and arr.__array_interface__["data"][0] == owner.__array_interface__["data"][0]:
        return owner
    return arr.reshape(-1, order="F")


def _memory(arr: np.ndarray) -> tuple:
    return (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str)


def _whole(view, arr, transposed: bool = False) -> bool:
    """Does the recorded ``view`` (offset, shape and strides in elements of a flat base,
    :class:`flamefuse.runtime.views.View`) show all of the F-ordered ``arr`` (``transposed``: its
    transpose), unrolled? The stride of a dimension of extent 1 addresses nothing: not compared."""
    if arr.ndim == 1:
        shape, strides = arr.shape, (1,)
    else:
        n, m = arr.shape
        shape, strides = ((m, n), (n, 1)) if transposed else ((n, m), (1, n))
    return (view.offset == 0 and not view.wrap and tuple(view.shape) == tuple(shape)
            and all(d == 1 or s == t for d, s, t in zip(shape, view.strides, strides)))


def _strided(view, strides) -> bool:
    """Has ``view`` these strides (a dimension of extent 1 addresses nothing: not compared)?"""
    return all(d == 1 or s == t for d, s, t in zip(view.shape, view.strides, strides))


def run_segment(seg: Segment, why: str) -> None:
    """Run the chain's longest fusable prefixes (at call boundaries), each as one kernel; a piece
    that fuses nothing and that LAPACK does faster (:func:`lapack_alone`) runs as LAPACK's
    routine, decided before any search (a cold run neither searches nor compiles its kernel)."""
    calls, k = _units(seg.calls), 0
    if _compiling(seg, calls, why):
        return
    pieces = []
    while k < len(calls):
        for j in range(len(calls), k, -1):
            if not worth_fusing(seg, calls[k:j]):
                continue
            chain = _chain(seg, calls[k:j])
            alone = lapack_alone(seg, calls[k:j]) if j == k + 1 else None
            f = NotFused(chain, alone) if alone is not None else fused(chain)
            if isinstance(f, Fused) or j == k + 1:
                break
        if isinstance(f, Fused):
            _run(seg, f, calls[k:j])
        else:
            from flamefuse.synth.eager import run_steps
            run_steps(seg, calls[k:j])
        pieces.append((calls[k:j], f))
        k = j
    line = explain.chain_line(seg, pieces, why)
    RUNS.append((line, not any(isinstance(f, Fused) for _, f in pieces)))
    del RUNS[:-8]


BACKGROUND = "its kernel is being compiled in the background"


def _compiling(seg: Segment, calls, why: str) -> bool:
    """Background compiling (:mod:`flamefuse.synth.background`): when an answer of the cut search
    is not at hand and the chain can run as its LAPACK calls, run it so and want it compiled."""
    from flamefuse.runtime import compiler
    if not compiler.background():
        return False
    from flamefuse.synth import background
    if not background.eager_possible(seg, calls) or background.ready(seg, calls, lapack_alone):
        return False
    compiler.want_chain(background.job_item(seg, calls))
    compiler.STATS["deferred_chains"] += 1
    from flamefuse.synth.eager import run_steps
    run_steps(seg, calls)
    pieces = [(calls, NotFused(_chain(seg, calls), BACKGROUND))]
    line = explain.chain_line(seg, pieces, why)
    RUNS.append((line, None))           # (flamefuse.synth.direct learns nothing from it)
    del RUNS[:-8]
    return True


def lapack_alone(seg: Segment, calls) -> str | None:
    """Why this piece, fused with nothing, runs as LAPACK's own routine (None: as its kernel).
    A lone ``chol`` is potrf, which measured 2-10% faster than the synthesized Cholesky at
    n = 500-2000 (one BLAS thread, float32 and float64); a lone triangular solve with one
    right-hand side (a vector) is a trsv, one memory-bound pass with nothing to block for, which
    trtrs does in one call where a blocked kernel makes 2 n / nb BLAS calls (three times
    trtrs's time at n = 1000). A lone solve with many right-hand sides (n/3 of them, one BLAS
    thread, float64) took 1.33 / 9.0 / 56.8 ms as trtrs against 1.45 / 8.6 / 58.8 ms as the
    trsm kernel at n = 500 / 1000 / 2000: no gain from the kernel at any size, so it is trtrs
    too (and, run as LAPACK alone, a warm call of it skips the group: :mod:`.direct`). The
    other single operations (trinv, ltl) measured as fast or faster as kernels and stay
    kernels."""
    if len(calls) != 1 or calls[0][2] != 1 or calls[0][3]:
        return None
    step = seg.steps[calls[0][1]]
    if step.op == "chol":
        return "fused with nothing: potrf"
    if step.op in ("trsm", "trsm_lt"):
        if seg.specs[dict(step.binds)["B"]].kind == "vector":
            return "one right-hand side: trtrs, nothing to fuse or block"
        return "fused with nothing: trtrs (the kernel measured no faster)"
    return None


def _run(seg: Segment, f: Fused, calls) -> None:
    arrays = [seg.buffers[b.name] for b in f.chain.buffers]
    kwargs = {}
    if any(s.op == "lu" for s in f.chain.steps):
        kwargs["piv"] = seg.piv if seg.piv is not None else np.empty(arrays[0].shape[0], np.int32)
    info = f.kernel(*arrays, **kwargs)
    from flamefuse.runtime import compiler
    if compiler.background():
        from flamefuse.synth.background import ran
        ran(f.chain, arrays)
    if info > 0 and all(c[0].op == "lu_factor" for c in calls):
        from flamefuse.synth.calls import WARNINGS      # SciPy warns and returns the factors
        WARNINGS.append(f"Diagonal number {info} is exactly zero. Singular matrix.")
        return
    if info > 0:
        from flamefuse.synth.eager import library_message
        spd = any(s.op == "chol" for s in f.chain.steps) and not any(s.op == "lu" for s in f.chain.steps)
        raise np.linalg.LinAlgError(library_message(_failing(calls, spd), info, spd))


def _failing(calls, spd: bool) -> str:
    """The name of the call of a fused chain whose factorisation failed, for its library's
    message: the first Cholesky of a chain that failed as positive definite, else the first
    call that factors or solves (an ``inv``, ``solve``, ``solve_triangular``, ``lu_factor``)."""
    ops = ("cholesky",) if spd else ("inv", "solve", "solve_triangular", "lu_factor")
    return next((c[0].name for c in calls if c[0].op in ops), calls[0][0].name)


__all__ = ["FLOATS", "Group", "Val", "finalize", "run_segment"]
