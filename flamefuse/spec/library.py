"""The library of operations: each one's exact 2x2 PME as tasks.

Every operation is written in the readable task syntax (:mod:`flamefuse.spec.expr`)
over *formal* operands; a spec binds them to its own operands.  Expressions
are exact (signs, transposes, sides) because the code generator runs them:

* ``X'`` transpose; ``L \\ B`` = L^{-1} B; ``B / L`` = B L^{-1}
* ``chol(A)`` lower Cholesky factor; ``inv(L)`` triangular inverse (of the
  operand's triangle); ``lu(A)`` LU factors with partial pivoting in place
  (unit lower L; the row interchanges are the kernel's, see docs/pivoting.md),
  ``lu_nopiv(A)`` the same without pivoting
* ``unit_lower(A)`` / ``upper(A)``: the triangle of a general block that
  holds LU factors (or their inverses)
* ``sylv(A, B, C)``: X solving A X + X B = C
* a triangular operand's block means its triangle (``L_TL`` of a lower L is
  lower triangular); products of blocks are ordinary matrix products.

Conventions: lower-triangular matrices, 2x2 partitions, the top-left
region grows (TL→BR) unless an invariant says otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Formal:
    """A formal operand: accepted kinds, structures and partitions; optional with a default."""
    kinds: tuple[str, ...]
    structures: tuple[str, ...]
    partitions: tuple[str, ...]
    default: str | None = None       # name of another formal it defaults to (in-place variants)


@dataclass(frozen=True)
class LibOp:
    summary: str
    formals: dict[str, Formal]
    tasks: tuple[str, ...]
    search_only: str = ""            # why no code can be generated, if so
    aliases: tuple[str, ...] = field(default=())
    pivot: bool = False              # partial pivoting: the panel [A11; A21] is factored with row swaps
    result: tuple[tuple[str, str], ...] = ()   # (written formal, form of its value: lower | symmetric | full)


LOWER = Formal(("matrix",), ("lower", "symmetric"), ("2x2",))
GENERAL = Formal(("matrix",), ("general",), ("2x2",))
UPPER = Formal(("matrix",), ("upper", "general"), ("2x2",))
ROWS = Formal(("matrix", "vector"), ("general",), ("rows",))

LIBRARY: dict[str, LibOp] = {
    "chol": LibOp(
        "Cholesky factorization A = L L^T; L overwrites the lower triangle of A",
        {"A": LOWER},
        ("op A_TL~ = chol(A_TL)",
         "A_BL~ = A_BL / A_TL~'",
         "A_BR@0 = A_BR - A_BL~ * A_BL~'",
         "op A_BR~ = chol(A_BR@0)"),
        result=(("A", "lower"),)),
    "trinv": LibOp(
        "triangular inverse R := L^{-1} (in place when R is not bound)",
        {"L": LOWER, "R": Formal(("matrix",), ("lower",), ("2x2",), default="L")},
        ("op R_TL~ = inv(L_TL)",
         "R_BL@0a = -(any(R_BL@0b, L_BL) * R_TL~)",
         "R_BL@0b = L_BR \\ any(R_BL@0a, L_BL)",
         "from R_BL~ = R_BL@0a, R_BL@0b",
         "op R_BR~ = inv(L_BR)"),
        result=(("R", "lower"),)),
    "ltl": LibOp(
        "product A := L^T L of a lower-triangular L (LAPACK lauum), lower triangle overwritten",
        {"L": LOWER},
        ("op L_TL@0 = L_TL' * L_TL",
         "L_TL~ = L_TL@0 + L_BL' * L_BL",
         "L_BL~ = L_BR' * L_BL",
         "op L_BR~ = L_BR' * L_BR"),
        result=(("L", "symmetric"),)),
    "trsm": LibOp(
        "triangular solve L X = B (matrix or vector B); X overwrites B",
        {"L": LOWER, "B": ROWS},
        ("op B_T~ = L_TL \\ B_T",
         "B_B@0 = B_B - L_BL * B_T~",
         "op B_B~ = L_BR \\ B_B@0"),
        aliases=("trsv",),
        result=(("B", "full"),)),
    "trsm_lt": LibOp(
        "transposed triangular solve L^T X = B (backward substitution); X overwrites B",
        {"L": LOWER, "B": ROWS},
        ("op B_B~ = L_BR' \\ B_B",
         "B_T@0 = B_T - L_BL' * B_B~",
         "op B_T~ = L_TL' \\ B_T@0"),
        result=(("B", "full"),)),
    "trsm_rt": LibOp(
        "triangular solve X L^T = B (B partitioned by columns); X overwrites B",
        {"L": LOWER, "B": Formal(("matrix",), ("general",), ("columns",))},
        ("op B_L~ = B_L / L_TL'",
         "B_R@0 = B_R - B_L~ * L_BL'",
         "op B_R~ = B_R@0 / L_BR'"),
        result=(("B", "full"),)),
    "trmv": LibOp(
        "triangular matrix-vector product y := y + L x",
        {"L": LOWER, "x": ROWS, "y": ROWS},
        ("op y_T~ = y_T + L_TL * x_T",
         "y_B@0a = any(y_B, y_B@0b) + L_BL * x_T",
         "op y_B@0b = any(y_B, y_B@0a) + L_BR * x_B"),
        result=(("y", "full"),)),
    "lu": LibOp(
        "LU factorization with partial pivoting P A = L U (LAPACK getrf); unit lower L and U "
        "overwrite A, the row interchanges go to the kernel's piv (0-based, as scipy.linalg.lu_factor)",
        {"A": GENERAL},
        ("op A_TL~ = lu(A_TL)",
         "A_TR~ = unit_lower(A_TL~) \\ A_TR",
         "A_BL~ = A_BL / upper(A_TL~)",
         "A_BR@0 = A_BR - A_BL~ * A_TR~",
         "op A_BR~ = lu(A_BR@0)"),
        aliases=("getrf",), pivot=True,
        result=(("A", "full"),)),
    "lu_nopiv": LibOp(
        "LU factorization without pivoting A = L U; unit lower L and U overwrite A "
        "(only for matrices that need no pivoting, e.g. diagonally dominant ones)",
        {"A": GENERAL},
        ("op A_TL~ = lu_nopiv(A_TL)",
         "A_TR~ = unit_lower(A_TL~) \\ A_TR",
         "A_BL~ = A_BL / upper(A_TL~)",
         "A_BR@0 = A_BR - A_BL~ * A_TR~",
         "op A_BR~ = lu_nopiv(A_BR@0)"),
        result=(("A", "full"),)),
    "trsm_unit": LibOp(
        "unit lower triangular solve unit_lower(L) X = B with L holding LU factors; X overwrites B",
        {"L": GENERAL, "B": ROWS},
        ("op B_T~ = unit_lower(L_TL) \\ B_T",
         "B_B@0 = B_B - L_BL * B_T~",
         "op B_B~ = unit_lower(L_BR) \\ B_B@0"),
        result=(("B", "full"),)),
    "trinv_unit": LibOp(
        "inverse of the unit lower triangle of A (LU factors), in place",
        {"A": GENERAL},
        ("op A_TL~ = inv(unit_lower(A_TL))",
         "A_BL@0a = -(any(A_BL@0b, A_BL) * unit_lower(A_TL~))",
         "A_BL@0b = unit_lower(A_BR) \\ any(A_BL@0a, A_BL)",
         "from A_BL~ = A_BL@0a, A_BL@0b",
         "op A_BR~ = inv(unit_lower(A_BR))"),
        result=(("A", "full"),)),
    "triuinv": LibOp(
        "inverse of an upper triangle U := U^{-1} (of an upper matrix or of LU factors), in place",
        {"U": UPPER},
        ("op U_TL~ = inv(upper(U_TL))",
         "U_TR@0a = -(upper(U_TL~) * any(U_TR@0b, U_TR))",
         "U_TR@0b = any(U_TR@0a, U_TR) / upper(U_BR)",
         "from U_TR~ = U_TR@0a, U_TR@0b",
         "op U_BR~ = inv(upper(U_BR))"),
        result=(("U", "full"),)),
    "ul": LibOp(
        "product A := U L of the upper triangle U and unit lower triangle L stored in A",
        {"A": GENERAL},
        ("op A_TL@0 = upper(A_TL) * unit_lower(A_TL)",
         "A_TL~ = A_TL@0 + A_TR * A_BL",
         "A_TR~ = A_TR * unit_lower(A_BR)",
         "A_BL~ = upper(A_BR) * A_BL",
         "op A_BR~ = upper(A_BR) * unit_lower(A_BR)"),
        result=(("A", "full"),)),
    "sylvester": LibOp(
        "triangular Sylvester equation A X + X B = C (A, B upper triangular); X overwrites C",
        {"A": Formal(("matrix",), ("upper",), ("2x2",)), "B": Formal(("matrix",), ("upper",), ("2x2",)),
         "C": GENERAL},
        ("op C_BL~ = sylv(A_BR, B_TL, C_BL)",
         "C_TL@0 = C_TL - A_TR * C_BL~",
         "op C_TL~ = sylv(A_TL, B_TL, C_TL@0)",
         "C_BR@0 = C_BR - C_BL~ * B_TR",
         "op C_BR~ = sylv(A_BR, B_BR, C_BR@0)",
         "C_TR@0a = any(C_TR, C_TR@0b) - A_TR * C_BR~",
         "C_TR@0b = any(C_TR, C_TR@0a) - C_TL~ * B_TR",
         "op C_TR~ = sylv(A_TL, B_BR, all(C_TR@0a, C_TR@0b))"),
        result=(("C", "full"),)),
}


def lookup(name: str) -> LibOp | None:
    for key, op in LIBRARY.items():
        if name == key or name in op.aliases:
            return op
    return None


def names() -> list[str]:
    return sorted(list(LIBRARY) + [a for op in LIBRARY.values() for a in op.aliases])
