"""The value of every block version as a SymPy matrix expression, with a numeric twin.

``Values().run(seq)`` follows a fine-task sequence from the original blocks
and records the value of every version it passes through: ``vals[ref]`` is a
:class:`Val` (``sym``: a SymPy matrix expression over the original blocks,
``MatrixSymbol`` s named ``A11``, ``L20``, with ``Inverse`` / ``Transpose``;
``num``: the same expression evaluated on fixed random blocks, 3 x 3 for a grid
dimension and 3 x 2 / 2 x 3 for an undivided one).  Block kernels the algebra
does not reason about (``chol``, ``lu``, ``ul``, the pivoted panel) give opaque
symbols named after their argument, so the same kernel of the same value is
the same symbol in every sequence; ``unit_lower(X)`` and ``upper(X)`` of a
general block are opaque too, except that the triangle a ``trinv`` wrote is
known to hold the inverse of the triangle it read.

``apply(task, read)`` is the value a task leaves in its target, given ``read``
(a Fac -> Val function): the one place that states what each fine task
computes, used for the sequences and for checking a derived update.

``Values(symbolic=False)`` follows the numbers only (checking an update needs
no algebra): every ``sym`` is then a :class:`Tag`, a fresh object per value,
and SymPy is not imported (it is imported by the first symbolic value).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from flamefuse.derive.blocks import Blk, Fac, FineTask, Ref, blk_name
from flamefuse.derive.evaluate import Unsupported

GRID, WHOLE = 3, 2                      # numeric sizes of a grid block and of an undivided dimension


def sympy():
    """SymPy, imported on first use (about 0.2 s: only derivations that need the algebra pay it)."""
    import sympy as sp
    return sp


def solve_sylvester(a, b, q):
    """SciPy's solve_sylvester, imported on first use (scipy.linalg takes about 0.15 s to import)."""
    from scipy.linalg import solve_sylvester as solve
    return solve(a, b, q)


class Tag:
    """The ``sym`` of a value when only the numbers are followed: every operation gives a new tag, so
    two values share a tag only when they are the same value (the triangle views are kept per value)."""
    __slots__ = ()

    def _new(self, *_):
        return Tag()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _new
    I = T = property(_new)


@dataclass(frozen=True)
class Val:
    sym: object
    num: np.ndarray


def original(blk: Blk, symbolic: bool = True) -> Val:
    """The initial value of a block: a MatrixSymbol (a Tag) and a well-conditioned random matrix."""
    rows = ("k", WHOLE) if blk.i is None else ("b", GRID)
    cols = ("k", WHOLE) if blk.j is None else ("b", GRID)
    rng = np.random.default_rng(zlib.crc32(blk_name(blk).encode()))
    num = rng.standard_normal((rows[1], cols[1])) * 0.3
    if blk.i is not None and blk.i == blk.j:
        num += 2.0 * np.eye(GRID)
    if not symbolic:
        return Val(Tag(), num)
    sp = sympy()
    return Val(sp.MatrixSymbol(blk_name(blk), sp.Symbol(rows[0]), sp.Symbol(cols[0])), num)


def opaque(name: str, of: Val, num: np.ndarray) -> Val:
    if isinstance(of.sym, Tag):
        return Val(Tag(), num)
    return Val(sympy().MatrixSymbol(f"{name}({of.sym})", *of.sym.shape), num)


class Values:
    """Block versions -> values, filled by running fine-task sequences from the original blocks."""

    def __init__(self, symbolic: bool = True):
        self.symbolic = symbolic
        self.vals: dict[Ref, Val] = {}
        self.views: dict[tuple[str, object], Val] = {}     # (kind, sym) -> value of that triangle view

    def __getitem__(self, ref: Ref) -> Val:
        if ref not in self.vals:
            if not ref.ver:
                self.vals[ref] = original(ref.blk, self.symbolic)
            else:                      # a version no sequence passed through: one of its tasks last
                for t in ref.ver:
                    prev = Ref(ref.blk, ref.ver - {t})
                    if t.target == ref.blk and (prev in self.vals or not prev.ver):
                        self.vals[ref] = self.apply(t, self[prev])
                        break
                else:
                    raise Unsupported(f"the value of {blk_name(ref.blk)} at an unknown version is read")
        return self.vals[ref]

    def factor(self, f: Fac) -> Val:
        """The matrix a factor stands for: its block's value (or a triangle view of it), transposed."""
        v = self.view(f.kind, self[f.ref])
        return Val(v.sym.T, v.num.T) if f.trans else v

    def view(self, kind: str, v: Val) -> Val:
        if kind not in ("UL", "UU"):
            return v
        key = (kind, v.sym)
        if key not in self.views:
            num = np.tril(v.num, -1) + np.eye(len(v.num)) if kind == "UL" else np.triu(v.num)
            self.views[key] = opaque("unit_lower" if kind == "UL" else "upper", v, num)
        return self.views[key]

    def run(self, seq) -> None:
        cur: dict[Blk, frozenset] = {}
        for t in seq:
            ver = cur.get(t.target, frozenset())
            self.vals[Ref(t.target, ver | {t})] = self.apply(t, self[Ref(t.target, ver)])
            cur[t.target] = ver | {t}

    def apply(self, t: FineTask, x: Val, read=None) -> Val:
        """The value ``t`` leaves in its target when the target holds ``x``."""
        read = read or self.factor
        a = read(t.a) if t.a is not None else None
        if t.kind == "acc":
            b = read(t.b)
            return Val(x.sym + t.alpha * a.sym * b.sym, x.num + t.alpha * a.num @ b.num)
        if t.kind == "copy":
            return Val(t.alpha * a.sym, t.alpha * a.num)
        if t.kind in ("trsm", "trmm"):
            m = (a.sym.I, np.linalg.inv(a.num)) if t.kind == "trsm" else (a.sym, a.num)
            if t.side == "L":
                return Val(t.alpha * m[0] * x.sym, t.alpha * m[1] @ x.num)
            return Val(t.alpha * x.sym * m[0], t.alpha * x.num @ m[1])
        if t.kind == "trinv" and t.form in ("L", "U"):
            return Val(x.sym.I, np.linalg.inv(x.num))
        if t.kind == "trinv":                              # the unit-lower / upper triangle of a general block
            kind = t.form
            inv = self.view(kind, x)
            inv = Val(inv.sym.I, np.linalg.inv(inv.num))
            keep = np.triu(x.num) if kind == "UL" else np.tril(x.num, -1)
            part = np.tril(inv.num, -1) if kind == "UL" else np.triu(inv.num)
            out = opaque(f"trinv_{kind}", x, keep + part)
            self.views[(kind, out.sym)] = inv
            self.views[("UU" if kind == "UL" else "UL", out.sym)] = self.view("UU" if kind == "UL" else "UL", x)
            return out
        if t.kind == "lauum":
            return Val(x.sym.T * x.sym, x.num.T @ x.num)
        if t.kind == "sylv":
            b = read(t.b)
            num = solve_sylvester(a.num, b.num, x.num)
            if isinstance(x.sym, Tag):
                return Val(Tag(), num)
            return Val(sympy().MatrixSymbol(f"sylv({a.sym}, {b.sym}, {x.sym})", *x.sym.shape), num)
        # kernels the algebra treats as opaque functions of their argument
        return opaque(t.kind + t.form, x, np.tanh(x.num) + np.eye(*x.num.shape))


def same(x: Val, y: Val) -> bool:
    """Equal by algebra (SymPy: expand, cancel inverse products); the numbers must agree too."""
    if x.num.shape != y.num.shape or not np.allclose(x.num, y.num, rtol=1e-9, atol=1e-9):
        return False
    diff = (x.sym - y.sym).expand().doit()
    return diff == 0 or isinstance(diff, sympy().ZeroMatrix) or diff.is_ZeroMatrix is True
