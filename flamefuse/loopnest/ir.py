"""Loop-nest IR: statements over rectangular parametric domains with affine accesses.

A :class:`Program` is a sequence of statements, each its own perfect loop
nest, executed in order (statement 0's whole nest, then statement 1's, ...).
A :class:`Statement` has named dimensions ``dims`` with extents
(:class:`Bound`, ``param + const``; iterator k runs over ``0 <= d_k < extent_k``)
and one or more :class:`Store` s executed in order at every instance.  Array
subscripts are :class:`Index` values ``coef * d + offset`` (identity,
transposed, shifted and strided accesses; ``dim=None`` is a constant).
Values are expression trees: :class:`Load`, :class:`Const`, :class:`Scalar`
(a run-time scalar argument), :class:`Bin`, :class:`Call` (unary function)
and :class:`Stored` (the value store ``k`` of the same instance wrote).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

from flamefuse.errors import fail

BINARY_OPS = ("+", "-", "*", "/", "min", "max", "&", "|", "^")
FUNCTIONS = ("neg", "abs", "sqrt", "exp", "log", "sin", "cos", "tanh")
DTYPES = ("float64", "float32", "int64", "int32", "bool")
ROLES = ("in", "inout", "out", "temp")


@dataclass(frozen=True)
class Bound:
    """``param + const`` (``param=None``: the constant alone)."""
    param: str | None
    const: int = 0

    def value(self, params: Mapping[str, int]) -> int:
        return (params[self.param] if self.param else 0) + self.const

    def __str__(self) -> str:
        if not self.param:
            return str(self.const)
        return self.param + (f"{self.const:+d}" if self.const else "")


@dataclass(frozen=True)
class Index:
    """One subscript: ``coef * dims[dim] + offset``; ``dim=None`` is the constant ``offset``."""
    dim: int | None
    coef: int = 1
    offset: int = 0


@dataclass(frozen=True)
class Access:
    array: str
    index: tuple[Index, ...]


@dataclass(frozen=True)
class Load:
    access: Access


@dataclass(frozen=True)
class Const:
    value: float | int


@dataclass(frozen=True)
class Scalar:
    name: str


@dataclass(frozen=True)
class Bin:
    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Call:
    fn: str
    arg: "Expr"


@dataclass(frozen=True)
class Stored:
    store: int


Expr = Union[Load, Const, Scalar, Bin, Call, Stored]


@dataclass(frozen=True)
class Store:
    access: Access
    value: Expr


@dataclass(frozen=True)
class Statement:
    name: str
    dims: tuple[str, ...]
    extents: tuple[Bound, ...]
    stores: tuple[Store, ...]

    def loads(self) -> tuple[Access, ...]:
        return tuple(a for s in self.stores for a in expr_loads(s.value))

    def accesses(self) -> tuple[tuple[Access, bool], ...]:
        """Every access with ``True`` for a write, in evaluation order."""
        out: list[tuple[Access, bool]] = []
        for s in self.stores:
            out += [(a, False) for a in expr_loads(s.value)]
            out.append((s.access, True))
        return tuple(out)


@dataclass(frozen=True)
class ArrayDecl:
    """An array: ``role`` is in (read only), inout (updated in place), out
    (allocated, filled with ``fill``, returned) or temp (allocated, not returned)."""
    name: str
    shape: tuple[Bound, ...]
    dtype: str = "float64"
    role: str = "in"
    fill: float | int | None = 0


@dataclass(frozen=True)
class Program:
    arrays: tuple[ArrayDecl, ...]
    statements: tuple[Statement, ...]
    scalars: tuple[str, ...] = ()

    def array(self, name: str) -> ArrayDecl:
        return {a.name: a for a in self.arrays}[name]

    def params(self) -> tuple[str, ...]:
        seen = {b.param for a in self.arrays for b in a.shape if b.param}
        return tuple(sorted(seen))


def expr_loads(e: Expr) -> tuple[Access, ...]:
    if isinstance(e, Load):
        return (e.access,)
    if isinstance(e, Bin):
        return expr_loads(e.left) + expr_loads(e.right)
    if isinstance(e, Call):
        return expr_loads(e.arg)
    return ()


def expr_stored(e: Expr) -> tuple[int, ...]:
    """The store indices an expression reads back through :class:`Stored`."""
    if isinstance(e, Stored):
        return (e.store,)
    if isinstance(e, Bin):
        return expr_stored(e.left) + expr_stored(e.right)
    if isinstance(e, Call):
        return expr_stored(e.arg)
    return ()


def expr_scalars(e: Expr) -> tuple[str, ...]:
    if isinstance(e, Scalar):
        return (e.name,)
    if isinstance(e, Bin):
        return expr_scalars(e.left) + expr_scalars(e.right)
    if isinstance(e, Call):
        return expr_scalars(e.arg)
    return ()


def validate(program: Program) -> Program:
    """Check names, ranks, ops and roles; raise FlameError on the first problem."""
    decls = {}
    for a in program.arrays:
        if a.name in decls or not a.name.isidentifier() or a.name.startswith("_"):
            fail(f"array name {a.name!r} is repeated, not an identifier, or starts with _")
        if a.dtype not in DTYPES or a.role not in ROLES:
            fail(f"array {a.name}: dtype {a.dtype!r} / role {a.role!r} unknown",
                 hint=f"dtypes {DTYPES}, roles {ROLES}")
        decls[a.name] = a
    params = set(program.params())
    for st in program.statements:
        if len(st.dims) != len(st.extents) or len(set(st.dims)) != len(st.dims):
            fail(f"statement {st.name}: dims {st.dims} and extents do not match")
        for b in st.extents:
            if b.param and b.param not in params:
                fail(f"statement {st.name}: extent {b} uses a size no array shape defines")
        for k, s in enumerate(st.stores):
            if decls.get(s.access.array) is None or decls[s.access.array].role == "in":
                fail(f"statement {st.name} stores to {s.access.array!r}, which is not a writable array")
            if any(i >= k for i in expr_stored(s.value)):
                fail(f"statement {st.name}: store {k} reads a later store's value")
            for name in expr_scalars(s.value):
                if name not in program.scalars:
                    fail(f"statement {st.name}: unknown scalar {name!r}")
            _check_expr(s.value, st)
        for acc, _ in st.accesses():
            decl = decls.get(acc.array)
            if decl is None:
                fail(f"statement {st.name}: unknown array {acc.array!r}")
            if len(acc.index) != len(decl.shape):
                fail(f"statement {st.name}: {acc.array} has rank {len(decl.shape)}, "
                     f"accessed with {len(acc.index)} subscripts")
            if any(ix.dim is not None and not 0 <= ix.dim < len(st.dims) for ix in acc.index):
                fail(f"statement {st.name}: subscript of {acc.array} uses an unknown dimension")
    return program


def _check_expr(e: Expr, st: Statement) -> None:
    if isinstance(e, Bin):
        if e.op not in BINARY_OPS:
            fail(f"statement {st.name}: unknown operator {e.op!r}", hint=f"use one of {BINARY_OPS}")
        _check_expr(e.left, st)
        _check_expr(e.right, st)
    elif isinstance(e, Call):
        if e.fn not in FUNCTIONS:
            fail(f"statement {st.name}: unknown function {e.fn!r}", hint=f"use one of {FUNCTIONS}")
        _check_expr(e.arg, st)
