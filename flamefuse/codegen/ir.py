"""The target-independent kernel IR: a derived loop as block operations on grid spans.

``lower(problem, name, loop) -> Kernel`` turns a :class:`DerivedLoop` into a
``Kernel``: the operand arrays, the traversal direction and the body as
``Stmt`` values, each one BLAS/LAPACK-shaped operation (``potrf trtri lauum
trsm trmm gemm syrk trsyl``, ``getrf`` on the pivoted panel with its row
interchanges) or a small unblocked piece (``lu ul triacc copy``) on
``Span`` s (an operand's block by grid index; ``None`` = the whole dimension).
``finish`` holds the steps after the loop (``colperm``: A := A P; a ``trsm``
back substitution); ``pivot`` says the kernel fills a pivot vector.
Raises :class:`Unsupported` for a fine task no target can run.
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.derive.blocks import TRI, Blk, Fac, FineTask, render
from flamefuse.derive.dims import classes
from flamefuse.derive.evaluate import Unsupported
from flamefuse.derive.loop import DerivedLoop
from flamefuse.pme.model import Finish, Operand, Problem


@dataclass(frozen=True)
class Span:
    operand: str
    i: int | None
    j: int | None
    ci: int = 0            # the dimension class of the rows (flamefuse.derive.dims) ...
    cj: int = 0            # ... and of the columns


@dataclass(frozen=True)
class Stmt:
    op: str
    target: Span
    alpha: int = 1
    side: str = "L"        # L | R
    uplo: str = "L"        # L | U (triangle of the triangular operand, or of the target)
    trans: str = "N"       # N | T of operand a
    trans_b: str = "N"     # N | T of operand b (gemm, triacc)
    diag: str = "N"        # N | U (unit diagonal)
    a: Span | None = None
    b: Span | None = None
    text: str = ""         # the fine task in FLAME notation
    swap: tuple[str, ...] = ()   # getrf: the other operands whose rows take the panel's interchanges


@dataclass(frozen=True)
class Kernel:
    name: str
    direction: str
    operands: tuple[Operand, ...]
    body: tuple[Stmt, ...]
    doc: tuple[str, ...]   # invariant and loop in FLAME notation
    finish: tuple[Stmt, ...] = ()   # once after the loop
    pivot: bool = False             # the kernel takes and fills a pivot vector piv
    classes: tuple = ()             # (operand, row class, column class) when there are two classes


def _span(b: Blk, cls: dict | None = None) -> Span:
    ci, cj = (cls or {}).get(b.operand, (0, 0))
    return Span(b.operand, b.i, b.j, ci or 0, cj or 0)


def _tri_diag(ops: dict, b: Blk) -> str | None:
    """``L``/``U`` when the block is a diagonal block of a triangular or symmetric operand."""
    if b.i is None or b.j is None or b.i != b.j:
        return None
    return {"lower": "L", "symmetric": "L", "upper": "U"}.get(ops[b.operand].structure)


def _tri(f: Fac) -> dict:
    return dict(uplo="L" if f.kind in ("L", "UL") else "U", diag="U" if f.kind == "UL" else "N",
                trans="T" if f.trans else "N")


def lower_task(ops: dict, t: FineTask, cls: dict | None = None) -> Stmt:
    """One fine task as a statement; ``cls``: the dimension classes when there are two."""
    def _sp(b: Blk) -> Span:
        return _span(b, cls)
    tgt, text = _sp(t.target), render(t)
    if t.kind == "chol":
        return Stmt("potrf", tgt, uplo="L", text=text)
    if t.kind == "trinv":
        return Stmt("trtri", tgt, uplo="L" if t.form in ("L", "UL") else "U",
                    diag="U" if t.form == "UL" else "N", text=text)
    if t.kind == "lauum":
        return Stmt("lauum", tgt, uplo="L", text=text)
    if t.kind == "sylv":
        if t.a.kind != "U" or t.b.kind != "U" or t.a.trans or t.b.trans:
            raise Unsupported(f"{text}: trsyl takes upper-triangular A and B")
        return Stmt("trsyl", tgt, a=_sp(t.a.ref.blk), b=_sp(t.b.ref.blk), text=text)
    if t.kind == "lu" and t.form == "P":
        raise Unsupported(f"{text}: a pivoted LU of a single block (the panel below it is missing)")
    if t.kind in ("lu", "ul"):
        return Stmt(t.kind, tgt, text=text)
    if t.kind == "lu_panel":
        swap = tuple(o.name for o in ops.values() if o.name != tgt.operand and o.partition == "rows")
        return Stmt("getrf", tgt, text=text, swap=swap)
    if t.kind in ("trsm", "trmm"):
        if t.a.kind not in TRI:
            raise Unsupported(f"{text}: the factor is not triangular")
        return Stmt(t.kind, tgt, t.alpha, t.side, a=_sp(t.a.ref.blk), text=text, **_tri(t.a))
    if t.kind == "copy":
        return Stmt("copy", tgt, t.alpha, uplo=_tri_diag(ops, t.target) or "G", a=_sp(t.a.ref.blk),
                    trans="T" if t.a.trans else "N", text=text)
    if t.kind == "acc":
        fa, fb, tri_target = t.a, t.b, _tri_diag(ops, t.target)
        if tri_target:
            if fa.ref == fb.ref and fa.trans != fb.trans and fa.kind == fb.kind == "G":
                return Stmt("syrk", tgt, t.alpha, uplo=tri_target, trans="T" if fa.trans else "N",
                            a=_sp(fa.ref.blk), text=text)
            raise Unsupported(f"{text}: a general product into a triangular diagonal block")
        if fa.kind == "G" and fb.kind == "G":
            return Stmt("gemm", tgt, t.alpha, trans="T" if fa.trans else "N", trans_b="T" if fb.trans else "N",
                        a=_sp(fa.ref.blk), b=_sp(fb.ref.blk), text=text)
        if (fa.kind in TRI) != (fb.kind in TRI):
            tri, other, side = (fa, fb, "L") if fa.kind in TRI else (fb, fa, "R")
            return Stmt("triacc", tgt, t.alpha, side, a=_sp(tri.ref.blk), b=_sp(other.ref.blk),
                        trans_b="T" if other.trans else "N", text=text, **_tri(tri))
        raise Unsupported(f"{text}: a product of two triangular blocks")
    raise Unsupported(f"no kernel for {text}")


def lower_finish(f: Finish) -> Stmt:
    """A step after the loop: the column interchanges of getri, or a back substitution."""
    if f.kind == "unpivot_columns":
        return Stmt("colperm", Span(f.operands[0], None, None), text=f"{f.operands[0]} := {f.operands[0]} P")
    if f.kind == "upper_solve":
        u, b = f.operands
        return Stmt("trsm", Span(b, None, None), side="L", uplo="U", a=Span(u, None, None),
                    text=f"{b} := upper({u})^{{-1}} {b}")
    raise Unsupported(f"no code for the finish step {f.kind}")


def lower(problem: Problem, name: str, loop: DerivedLoop) -> Kernel:
    ops = {o.name: o for o in problem.operands}
    cls = classes(problem)
    two = any(c == 1 for v in cls.values() for c in v)
    body = tuple(lower_task(ops, t, cls if two else None) for t in loop.update())
    finish = tuple(lower_finish(f) for f in problem.finish)
    doc = tuple(loop.lines()) + tuple(f"after the loop: {st.text}" for st in finish)
    return Kernel(name, loop.direction, problem.operands, body, doc, finish,
                  pivot=any(st.op == "getrf" for st in body),
                  classes=tuple((o, *cls[o]) for o in cls) if two else ())
