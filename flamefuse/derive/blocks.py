"""Blocks of the 3x3 repartition, block values with versions, and fine tasks.

A storage block is ``Blk(operand, i, j)`` with grid indices 0..2 (``None`` for
an undivided dimension: rows-partitioned operands have ``j=None``).  A block's
*version* is the frozenset of fine tasks applied to it since the operation
started, so two groupings that apply the same terms in different orders agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

TRI = ("L", "U", "UL", "UU")     # lower, upper; unit_lower(X), upper(X) of a general block


@dataclass(frozen=True)
class Blk:
    operand: str                 # operand name as written in the spec (``A``, ``b``)
    i: int | None
    j: int | None


@dataclass(frozen=True)
class Ref:
    """The value of a block at a version."""
    blk: Blk
    ver: frozenset


@dataclass(frozen=True)
class Fac:
    """A block used as a factor: its value, its shape kind (G or one of TRI), transposed or not."""
    ref: Ref
    kind: str
    trans: bool = False

    def t(self) -> "Fac":
        return Fac(self.ref, self.kind, not self.trans)


@dataclass(frozen=True)
class FineTask:
    """One block operation on ``target``.

    kinds: ``sylv`` (target := X with a X + X b = target), ``chol trinv lauum lu ul`` (in place on a diagonal block; ``form`` is
    the triangle kind for trinv, ``P`` for a pivoted lu), ``lu_panel`` (the
    pivoted panel below and including the diagonal block, with its row swaps), ``trsm trmm`` (target := alpha op(a)^{-1} target
    or alpha op(a) target, ``side`` L or R), ``acc`` (target += alpha op(a) op(b)),
    ``copy`` (target := alpha a).  ``base`` is the target version the task needs:
    the whole version for in-place kinds, only its non-acc part for ``acc`` (terms
    of a sum commute).
    """
    kind: str
    target: Blk
    base: frozenset
    alpha: int = 1
    side: str = ""
    form: str = ""
    a: Fac | None = None
    b: Fac | None = None

    def reads(self) -> tuple[Ref, ...]:
        return tuple(f.ref for f in (self.a, self.b) if f is not None)


def inplace(ver: frozenset) -> frozenset:
    return frozenset(t for t in ver if t.kind != "acc")


@dataclass(frozen=True)
class Place:
    """Where a region lies on the 3x3 grid: operand, row and column block indices, structure."""
    operand: str
    rows: tuple
    cols: tuple
    structure: str               # lower | upper | general (symmetric is stored lower)

    def blocks(self) -> tuple[Blk, ...]:
        return _blocks(self.operand, self.rows, self.cols, self.structure)


@lru_cache(maxsize=4096)
def _blocks(operand: str, rows: tuple, cols: tuple, structure: str) -> tuple[Blk, ...]:
    """The stored blocks of a place, column by column (made once per place: the derivation asks
    for them at every block operation)."""
    return tuple(Blk(operand, i, j) for j in cols for i in rows if _present(structure, i, j))


def _present(structure: str, i, j) -> bool:
    if i is None or j is None:
        return True
    return not (structure == "lower" and i < j or structure == "upper" and i > j)


def diag_kind(structure: str, i, j) -> str:
    if i is None or j is None or i != j:
        return "G"
    return "L" if structure == "lower" else "U" if structure == "upper" else "G"


@dataclass(frozen=True)
class Mat:
    """A block matrix value: row and column block indices and the factors present."""
    rows: tuple
    cols: tuple
    blocks: tuple                # ((i, j), Fac) pairs, absent blocks are zero

    def get(self, i, j) -> Fac | None:
        return dict(self.blocks).get((i, j))

    def T(self) -> "Mat":
        return Mat(self.cols, self.rows, tuple(((j, i), f.t()) for (i, j), f in self.blocks))

    def triangular(self) -> bool:
        return self.rows == self.cols and all(
            (f.kind in TRI) == (i == j) for (i, j), f in self.blocks)

    def lower(self) -> bool:
        """Effectively lower triangular (after transposition)?"""
        offs = [(i, j) for (i, j), _ in self.blocks if i != j]
        if offs:
            i, j = offs[0]
            return i > j
        f = self.blocks[0][1]
        return (f.kind in ("L", "UL")) != f.trans


def wrap(m: Mat, kind: str) -> Mat:
    """``unit_lower(m)`` (kind UL, unit diagonal) or ``upper(m)`` (kind UU) of a block matrix."""
    keep = (lambda i, j: i > j) if kind == "UL" else (lambda i, j: i < j)
    out = []
    for (i, j), f in m.blocks:
        if i == j:
            out.append(((i, j), Fac(f.ref, kind, f.trans)))
        elif keep(i, j):
            out.append(((i, j), f))
    return Mat(m.rows, m.cols, tuple(out))


def split(part: str, s: int) -> tuple:
    """Block indices of a 2x2/2x1 part for the split after grid index ``s - 1``."""
    top, bottom = tuple(range(0, s)), tuple(range(s, 3))
    return {"T": top, "L": top, "B": bottom, "R": bottom}[part]


def place_of(operand, part: str, s: int, s_col: int | None = None) -> Place:
    """The Place of an operand's region ``part`` (TL, BL, T, R, ...) under split s (of its rows;
    ``s_col`` of its columns when they belong to another dimension class, else s)."""
    s_col = s if s_col is None else s_col
    structure = "lower" if operand.structure in ("lower", "symmetric") else operand.structure
    if operand.kind == "vector" or operand.partition == "rows":
        return Place(operand.name, split(part, s), (None,), "general")
    if operand.partition == "columns":
        return Place(operand.name, (None,), split(part, s_col), "general")
    return Place(operand.name, split(part[0], s), split(part[1], s_col),
                 structure)


# ---------------------------------------------------------------- printing

def blk_name(b: Blk) -> str:
    return b.operand + "".join(str(k) for k in (b.i, b.j) if k is not None)


def fac_name(f: Fac, inverse: bool = False) -> str:
    base = blk_name(f.ref.blk)
    if f.kind == "UL":
        base = f"unit_lower({base})"
    elif f.kind == "UU":
        base = f"upper({base})"
    if inverse:
        return base + ("^{-T}" if f.trans else "^{-1}")
    return base + ("^T" if f.trans else "")


def render(t: FineTask) -> str:
    """One fine task in FLAME notation, e.g. ``A21 := A21 A11^{-T}``."""
    x = blk_name(t.target)
    sign = "-" if t.alpha < 0 else ""
    if t.kind == "chol":
        return f"{x} := chol({x})"
    if t.kind == "trinv":
        inner = {"L": x, "U": x, "UL": f"unit_lower({x})", "UU": f"upper({x})"}[t.form]
        return f"{x} := inv({inner})"
    if t.kind == "lauum":
        return f"{x} := {x}^T {x}"
    if t.kind == "lu":
        return f"{x} := lu({x})"
    if t.kind == "lu_panel":
        below = blk_name(Blk(t.target.operand, t.target.i + 1, t.target.j))
        return f"[{x}; {below}], p1 := lu_piv([{x}; {below}]); the other columns' rows := P(p1) rows"
    if t.kind == "ul":
        return f"{x} := upper({x}) unit_lower({x})"
    if t.kind in ("trsm", "trmm"):
        f = fac_name(t.a, inverse=t.kind == "trsm")
        return f"{x} := {sign}{f} {x}" if t.side == "L" else f"{x} := {sign}{x} {f}"
    if t.kind == "acc":
        return f"{x} {'-=' if t.alpha < 0 else '+='} {fac_name(t.a)} {fac_name(t.b)}"
    if t.kind == "copy":
        return f"{x} := {sign}{fac_name(t.a)}"
    if t.kind == "sylv":
        return f"{x} := sylv({fac_name(t.a)}, {fac_name(t.b)}, {x})"
    raise ValueError(t.kind)
