"""Recorded calls -> library operations on the group's buffers (see :mod:`flamefuse.synth.group`)."""
from __future__ import annotations

import numpy as np

from flamefuse.synth.fill import copy_finite, copy_lower
from flamefuse.synth.group import Group, Val, fortran_buffer, lapack_alone
from flamefuse.synth.structure import is_identity, is_lower, is_symmetric


def translate(g: Group, i: int, op) -> None:
    g.make_room()
    call, ins = op.name, op.ins
    vals = [g.val(x) for x in ins]
    arrays = [v for v in vals if v.arr.dtype.kind != "i"]     # lu_solve's pivots are int32
    if any(v.arr.dtype.char not in "fd" for v in arrays) or len({v.arr.dtype for v in arrays}) > 1 \
            or any(0 in v.arr.shape for v in vals):
        return g.eager(i, call, vals)
    HANDLERS[call.op](g, i, call, ins, vals)


def _square(v: Val) -> bool:
    return v.arr.ndim == 2 and v.arr.shape[0] == v.arr.shape[1]


def _triangular(v: Val) -> str | None:
    """'lower' / 'upper' when the value is known (made in this group) or checked to be triangular."""
    if v.form == "lower":
        return "upper" if v.t else "lower"
    if v.private:
        return None
    if is_lower(v.arr):
        return "lower"
    if is_lower(v.arr.T):
        return "upper"
    return None


def _symmetric(v: Val) -> bool:
    return v.form == "symmetric" or (not v.private and is_symmetric(v.arr))


def _lower_buffer(g: Group, v: Val, lower: bool) -> tuple[str, bool]:
    """(a buffer whose lower triangle L gives the triangle ``lower`` of the value v, whether that
    triangle is L^T): v's own storage when it holds that triangle, else a copy."""
    t = v.t and v.form != "symmetric"
    if lower != t:
        return g.use_lower(v), t
    g.ensure_done(v)
    value = v.value()
    # read in place where that triangle is stored column-major (SciPy's upper factor: the
    # transposed view of a Fortran-ordered lower one); use_lower copies only what it must
    return g.use_lower(Val(value if lower else value.T)), not lower


def _settle(g: Group, i, a: Val, lower: bool, x, b: Val) -> None:
    """Close the open chain now if taking a's triangle or b as a right-hand side will copy a
    value the chain is still writing (so no buffer is named in a chain that then closes)."""
    if (g.pending(b) and not g.dead(i, x)) or (g.pending(a) and lower == (a.t and a.form != "symmetric")):
        g.close("a result still referenced by the script is copied")


def _rhs(g: Group, i, x, v: Val) -> tuple[str, Val]:
    return g.own(i, x, v, False, "general", "rows" if v.arr.ndim == 2 else "vector")


def cholesky(g: Group, i, call, ins, vals):
    v = vals[0]
    if not _square(v):
        return g.eager(i, call, vals)
    name, buf = _chol_input(g, i, ins[0], v, call.upper)
    g.steps(call, [("chol", [("A", name)])])
    g.put(i, buf.arr, False, "lower")          # the recorded view of an upper result is transposed


def _chol_input(g: Group, i, x, v: Val, flip: bool) -> tuple[str, Val]:
    """The buffer ``chol`` factors: v's own when it is dead and stored as needed, else a new
    Fortran-ordered one holding only v's lower triangle (``chol`` reads nothing else; for a
    C-ordered input that is half the traffic of a full transposing copy)."""
    if v.form == "lower" or g.pending(v) or (g.dead(i, x) and (v.t == flip or v.form == "symmetric")):
        return g.own(i, x, v, flip, "symmetric")
    src = _lower_source(v)
    return _copy_lower(g, src.T if flip and v.form == "full" else src)


def _copy_lower(g: Group, src: np.ndarray) -> tuple[str, Val]:
    """A new Fortran-ordered symmetric buffer of the chain holding ``src``'s lower triangle."""
    arr = fortran_buffer(src.shape, src.dtype)
    copy_lower(arr, src)
    return g._add(arr, "matrix", "symmetric"), Val(arr, private=True)


def _lower_source(v: Val) -> np.ndarray:
    """An array whose lower triangle is that of v's value: v's storage as it is for a symmetric
    v (its lower triangle stands for the whole, whichever way it is read: nothing is mirrored),
    else the value."""
    return v.arr if v.form == "symmetric" else v.value()


def inv(g: Group, i, call, ins, vals):
    v = vals[0]
    if not _square(v):
        return g.eager(i, call, vals)
    tri = _triangular(v)
    if tri is not None:
        t_out = tri == "upper"             # the value is L^T for a lower-triangular L
        if v.t == t_out and g.dead(i, ins[0]):
            name, buf = g.own(i, ins[0], v, v.t, "lower")
            g.steps(call, [("trinv", [("L", name)])])
            g.put(i, buf.arr, t_out, "lower")
            return
        if v.t == t_out:
            lname = g.use_lower(v)
        else:
            g.ensure_done(v)
            value = v.value()
            lname = g.use_lower(Val(np.array(value.T if t_out else value, order="F")))
        rname, arr = g.empty_like(v, "lower")
        g.steps(call, [("trinv", [("L", lname), ("R", rname)])])
        g.put(i, arr, t_out, "lower")
        return
    if _symmetric(v):
        g.close("")
        name, buf = _copy(g, v, "symmetric")       # v stays intact for the general inverse
        g.steps(call, [("chol", [("A", name)]), ("trinv", [("L", name)]), ("ltl", [("L", name)])])
        try:
            g.close("")
            g.put(i, buf.arr, False, "symmetric")
            return
        except np.linalg.LinAlgError:
            from flamefuse.synth import explain
            explain.add(f"linalg: {call.name}: symmetric but not positive definite: the general inverse")
    g.close("")
    if _deferred(g, i, call, vals, {"A": ("matrix", "general", v.arr)}, [
            ("lu", [("A", "A")]), ("trinv_unit", [("A", "A")]), ("triuinv", [("U", "A")]),
            ("ul", [("A", "A")])], [("unpivot_columns", ("A",))]):
        return
    name, buf = _copy(g, v, "general")
    g.steps(call, [("lu", [("A", name)]), ("trinv_unit", [("A", name)]), ("triuinv", [("U", name)]),
                   ("ul", [("A", name)])], finish=[("unpivot_columns", (name,))])
    g.put(i, buf.arr, False, "full")


def _deferred(g: Group, i, call, vals, buffers: dict, steps: list, finish: list) -> bool:
    """Background compiling: a general inverse or solve whose kernel is not compiled yet runs as
    NumPy's call (:func:`flamefuse.synth.background.deferred`); the buffers' types are those of
    the Fortran-ordered copies the chain would make (``_copy``, ``_copy_rhs``)."""
    from flamefuse.runtime import compiler
    if not compiler.background():
        return False
    from flamefuse.synth.background import deferred
    typed = {k: (kind, st, np.empty(a.shape, a.dtype, order="F")) for k, (kind, st, a) in buffers.items()}
    return deferred(g, i, call, vals, typed, steps, finish, lapack_alone)


def matmul(g: Group, i, call, ins, vals):
    a, b = vals
    va, vb = ins[0][1], ins[1][1]
    same = ins[0][0] is ins[1][0] and len(va.shape) == 2 and va == type(va)(vb.offset, vb.shape[::-1], vb.strides[::-1])
    if same and b.form == "lower" and not b.t and _square(b):
        name, buf = g.own(i, ins[1], b, False, "lower")
        g.steps(call, [("ltl", [("L", name)])])
        g.put(i, buf.arr, False, "symmetric")
        return
    for v in vals:
        g.ensure_done(v)
    ma, mb = a.value(), b.value()
    from flamefuse.synth import explain
    if same:
        c = syrk(mb)
        explain.add(f"linalg: matmul of a matrix's transpose and the matrix: syrk (the lower triangle), n = {c.shape[0]}")
        g.put(i, c, False, "symmetric")
        return
    order = "C" if g.transposed_out(i) else "F"      # the layout the result's view reads
    c = identity_product(ma, mb, order)
    if c is not None:
        explain.add(f"linalg: matmul with an identity matrix: a copy, no gemm ({explain.shape_of(vals)})")
    else:                                  # one BLAS gemm, no copies, the result in that layout
        c = np.matmul(ma, mb) if order == "C" else np.matmul(mb.T, ma.T).T
    g.put_value(i, c)


def syrk(m: np.ndarray) -> np.ndarray:
    """m^T m: only its lower triangle, Fortran-ordered (the rest zero), by the BLAS syrk (half of
    gemm's flops), read from m's storage as it is (a C-ordered m is passed as the F-ordered m^T).

    SciPy's BLAS, the library the synthesized kernels call: NumPy ships its own OpenBLAS, whose
    threads still spin after a call while the next kernel's SciPy BLAS calls want the cores
    (an SPD inverse after NumPy's syrk ran 3x slower at n = 1500)."""
    from scipy.linalg.blas import get_blas_funcs
    if m.flags.f_contiguous:
        a, trans = m, 1
    elif m.flags.c_contiguous:
        a, trans = m.T, 0
    else:
        a, trans = np.asfortranarray(m), 1
    return get_blas_funcs("syrk", (a,))(1.0, a, trans=trans, lower=1)


def identity_product(ma: np.ndarray, mb: np.ndarray, order: str = "F") -> np.ndarray | None:
    """``ma @ mb`` when one factor is exactly the identity (``np.identity(n) @ P``): a copy of
    the other in ``order``, which is that product when the other is finite (else None, and
    gemm gives NumPy's NaNs)."""
    for eye, other in ((ma, mb), (mb, ma)):
        if is_identity(eye):
            out = np.empty(other.shape, other.dtype, order=order)
            # column by column through the Fortran-ordered side (a C-ordered copy as its transpose)
            done = copy_finite(out, other) if order == "F" else copy_finite(out.T, other.T)
            return out if done else None
    return None


def solve_triangular(g: Group, i, call, ins, vals):
    a, b = vals
    if not _square(a) or b.arr.ndim not in (1, 2) or call.trans not in (0, 1):
        return g.eager(i, call, vals)
    _settle(g, i, a, call.lower, ins[1], b)
    lname, transposed = _lower_buffer(g, a, call.lower)
    bname, bv = _rhs(g, i, ins[1], b)
    op = "trsm_lt" if transposed != bool(call.trans) else "trsm"
    g.steps(call, [(op, [("L", lname), ("B", bname)])])
    g.put(i, bv.arr, False, "full")


def solve(g: Group, i, call, ins, vals):
    a, b = vals
    if not _square(a) or b.arr.ndim not in (1, 2):
        return g.eager(i, call, vals)
    tri = _triangular(a)
    if tri is not None:
        _settle(g, i, a, tri == "lower", ins[1], b)
        lname, transposed = _lower_buffer(g, a, tri == "lower")
        bname, bv = _rhs(g, i, ins[1], b)
        g.steps(call, [("trsm_lt" if transposed else "trsm", [("L", lname), ("B", bname)])])
        g.put(i, bv.arr, False, "full")
        return
    if _symmetric(a):
        g.ensure_done(b)
        g.close("")
        name, _ = _copy(g, a, "symmetric")
        bname, bv = _copy_rhs(g, b)
        g.steps(call, [("chol", [("A", name)]), ("trsm", [("L", name), ("B", bname)]),
                       ("trsm_lt", [("L", name), ("B", bname)])])
        try:
            g.close("")
            g.put(i, bv.arr, False, "full")
            return
        except np.linalg.LinAlgError:
            from flamefuse.synth import explain
            explain.add(f"linalg: {call.name}: symmetric but not positive definite: LU")
    g.ensure_done(b)
    g.close("")
    if _deferred(g, i, call, vals, {"A": ("matrix", "general", a.arr),
                                    "B": ("rows" if b.arr.ndim == 2 else "vector", "general", b.arr)},
                 [("lu", [("A", "A")]), ("trsm_unit", [("L", "A"), ("B", "B")])],
                 [("upper_solve", ("A", "B"))]):
        return
    name, _ = _copy(g, a, "general")
    bname, bv = _copy_rhs(g, b)
    g.steps(call, [("lu", [("A", name)]), ("trsm_unit", [("L", name), ("B", bname)])],
            finish=[("upper_solve", (name, bname))])
    g.put(i, bv.arr, False, "full")


def _copy(g: Group, v: Val, structure: str):
    """A new Fortran-ordered buffer of v's value; of only its lower triangle for a symmetric
    one (what ``chol`` reads; a failed ``chol`` falls back on a new copy of v)."""
    g.ensure_done(v)
    if structure == "symmetric":
        return _copy_lower(g, _lower_source(v))
    arr = np.array(v.value(), order="F")
    return g._add(arr, "matrix", structure), Val(arr, private=True)


def _copy_rhs(g: Group, v: Val):
    g.ensure_done(v)
    arr = np.array(v.value(), order="F")
    name = g._add(arr, "rows" if arr.ndim == 2 else "vector", "general")
    return name, Val(arr, private=True)


def cho_solve(g: Group, i, call, ins, vals):
    c, b = vals
    if not _square(c) or b.arr.ndim not in (1, 2):
        return g.eager(i, call, vals)
    _settle(g, i, c, call.lower, ins[1], b)
    lname, _ = _lower_buffer(g, c, call.lower)     # either way the Cholesky factor L is that lower triangle
    bname, bv = _rhs(g, i, ins[1], b)
    g.steps(call, [("trsm", [("L", lname), ("B", bname)]), ("trsm_lt", [("L", lname), ("B", bname)])])
    g.put(i, bv.arr, False, "full")


def lu_factor(g: Group, i, call, ins, vals):
    a = vals[0]
    if not _square(a):
        return g.eager(i, call, vals)
    g.ensure_done(a)
    g.close("")
    name, buf = g.own(i, ins[0], a, False, "general")
    piv = np.zeros(a.arr.shape[0], np.int32)
    g.seg.piv = piv
    g.steps(call, [("lu", [("A", name)])])
    g.put(i, buf.arr, False, "full")
    g.env[id(call.extra[0][0])] = Val(piv, private=True)


def lu_solve(g: Group, i, call, ins, vals):
    lu, piv, b = vals
    name = g.name_of(lu.arr)
    if (call.trans == 0 and name is not None and piv.arr is g.seg.piv and not lu.t
            and [s.op for s in g.seg.steps] == ["lu"] and b.arr.ndim in (1, 2) and g.name_of(b.arr) is None and not g.pending(b)):
        bname, bv = _copy_rhs(g, b)
        g.steps(call, [("trsm_unit", [("L", name), ("B", bname)])], finish=[("upper_solve", (name, bname))])
        g.put(i, bv.arr, False, "full")
        return
    return g.eager(i, call, vals)


HANDLERS = {"cholesky": cholesky, "inv": inv, "matmul": matmul, "solve_triangular": solve_triangular,
            "solve": solve, "cho_solve": cho_solve, "lu_factor": lu_factor, "lu_solve": lu_solve}
