"""A small builder for loop-nest programs over NumPy-shaped arrays.

    b = Builder()
    A = b.array("A", ("n", "m")); p = b.array("p", ("m",)); r = b.array("r", ("n",))
    q = b.matvec(A, p)            # q[i] += A[i, j] * p[j]      (new zero-filled array)
    s = b.matvec(A.T, r)          # s[j] += A[i, j] * r[i]      (A.T is a transposed view)
    program = b.program(outputs=[q, s])

General statements use :class:`Dim` indices (``i + 1``, ``2 * i``, ``i - 1``)
and operator overloading on indexed arrays: ``b.assign(B[i, j], A[i, j] * 2)``,
``b.accumulate(x[j], B[i, j] * y[i])`` (``x[j] = x[j] + ...``; ``op=`` for
``*``, ``min``, ``max``, ``&``, ``|``, ``^``).  Dimensions are ordered by
first appearance (target first); each extent comes from a plain ``A[i]``
subscript, or from ``extents={"i": "n"}``.  Helpers: :meth:`Builder.matvec`
(``A @ x``; ``A.T @ y`` through a view), :meth:`Builder.vecmat` (``x @ A``),
:meth:`Builder.outer`, :meth:`Builder.axpby`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from flamefuse.errors import fail
from flamefuse.loopnest.ir import (Access, ArrayDecl, Bin, Bound, Call, Const, Expr, Index, Load,
                                   Program, Scalar, Statement, Store, validate)


def bound(spec) -> Bound:
    """``"n"``, ``"n-1"``, ``"n+2"``, ``5`` or a Bound."""
    if isinstance(spec, Bound):
        return spec
    if isinstance(spec, int):
        return Bound(None, spec)
    text = str(spec).replace(" ", "")
    for sign in "+-":
        if sign in text[1:]:
            name, const = text.split(sign, 1)
            return Bound(name, int(const) * (1 if sign == "+" else -1))
    return Bound(text, 0)


@dataclass(frozen=True)
class Dim:
    """A symbolic subscript ``coef * name + offset``."""
    name: str
    coef: int = 1
    offset: int = 0

    def __add__(self, k: int):
        return replace(self, offset=self.offset + k)

    def __sub__(self, k: int):
        return replace(self, offset=self.offset - k)

    def __mul__(self, k: int):
        return replace(self, coef=self.coef * k, offset=self.offset * k)

    __rmul__ = __mul__
    __radd__ = __add__


@dataclass(frozen=True)
class Term:
    """An expression under construction (array indices still named)."""
    expr: Expr

    def _bin(self, op, other, swap=False):
        o = lift(other)
        return Term(Bin(op, o.expr, self.expr) if swap else Bin(op, self.expr, o.expr))

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __truediv__(self, o): return self._bin("/", o)
    def __rtruediv__(self, o): return self._bin("/", o, True)
    def __and__(self, o): return self._bin("&", o)
    def __or__(self, o): return self._bin("|", o)
    def __xor__(self, o): return self._bin("^", o)
    def __neg__(self): return Term(Call("neg", self.expr))


def lift(x) -> Term:
    return x if isinstance(x, Term) else Term(Const(x))


def minimum(a, b) -> Term:
    return Term(Bin("min", lift(a).expr, lift(b).expr))


def maximum(a, b) -> Term:
    return Term(Bin("max", lift(a).expr, lift(b).expr))


def call(fn: str, a) -> Term:
    return Term(Call(fn, lift(a).expr))


@dataclass(frozen=True)
class Ref:
    """An array, or a view of one with permuted axes (``.T``)."""
    name: str
    axes: tuple[int, ...]
    shape: tuple[Bound, ...]

    @property
    def T(self) -> "Ref":
        return Ref(self.name, self.axes[::-1], self.shape[::-1])

    def __getitem__(self, subs) -> Term:
        subs = subs if isinstance(subs, tuple) else (subs,)
        if len(subs) != len(self.axes):
            fail(f"{self.name} has {len(self.axes)} axes, indexed with {len(subs)}")
        base = [None] * len(subs)
        for k, s in enumerate(subs):
            base[self.axes[k]] = Index(s.name, s.coef, s.offset) if isinstance(s, Dim) else Index(None, 0, s)
        return Term(Load(Access(self.name, tuple(base))))


class Builder:
    def __init__(self):
        self._arrays: dict[str, ArrayDecl] = {}
        self._statements: list[Statement] = []
        self._scalars: list[str] = []

    def array(self, name, shape, dtype="float64", role="in", fill=0) -> Ref:
        if name in self._arrays:
            fail(f"array {name!r} declared twice")
        shp = tuple(bound(s) for s in shape)
        self._arrays[name] = ArrayDecl(name, shp, dtype, role, fill)
        return Ref(name, tuple(range(len(shp))), tuple(shp))

    def scalar(self, name: str) -> Term:
        if name not in self._scalars:
            self._scalars.append(name)
        return Term(Scalar(name))

    def fresh(self, shape, dtype="float64", fill=0) -> Ref:
        k = len(self._arrays)
        while f"t{k}" in self._arrays:
            k += 1
        return self.array(f"t{k}", shape, dtype, "out", fill)

    def assign(self, target: Term, value, name: str | None = None, extents=None) -> None:
        if not isinstance(target.expr, Load):
            fail("the target of an assignment must be an indexed array")
        acc = target.expr.access
        decl = self._arrays[acc.array]
        if decl.role == "in":
            self._arrays[acc.array] = replace(decl, role="inout")
        self._add(name, acc, lift(value).expr, dict(extents or {}))

    def accumulate(self, target: Term, value, op: str = "+", name=None, extents=None) -> None:
        self.assign(target, Term(Bin(op, target.expr, lift(value).expr)), name, extents)

    def matvec(self, A: Ref, x: Ref, out: Ref | None = None, alpha=None) -> Ref:
        """``out[i] += alpha * A[i, j] * x[j]`` (``A`` may be a ``.T`` view)."""
        i, j = Dim("i"), Dim("j")
        out = out or self.fresh((A.shape[0],), self._arrays[A.name].dtype)
        term = A[i, j] * x[j]
        self.accumulate(out[i], term if alpha is None else lift(alpha) * term)
        return out

    def vecmat(self, x: Ref, A: Ref, out: Ref | None = None, alpha=None) -> Ref:
        """``x @ A``."""
        return self.matvec(A.T, x, out, alpha)

    def outer(self, u: Ref, v: Ref, out: Ref | None = None, alpha=None) -> Ref:
        """``out[i, j] = alpha * u[i] * v[j]``."""
        i, j = Dim("i"), Dim("j")
        out = out or self.fresh((u.shape[0], v.shape[0]))
        term = u[i] * v[j]
        self.assign(out[i, j], term if alpha is None else lift(alpha) * term)
        return out

    def axpby(self, a, x: Ref, b, y: Ref, out: Ref | None = None) -> Ref:
        """``out[i] = a * x[i] + b * y[i]``."""
        i = Dim("i")
        out = out or self.fresh(x.shape)
        self.assign(out[i], lift(a) * x[i] + lift(b) * y[i])
        return out

    def program(self, outputs=None) -> Program:
        """The program; builder-made arrays not in ``outputs`` become temporaries."""
        keep = None if outputs is None else {r.name for r in outputs}
        arrays = tuple(replace(a, role="temp") if a.role == "out" and keep is not None
                       and a.name not in keep else a for a in self._arrays.values())
        return validate(Program(arrays, tuple(self._statements), tuple(self._scalars)))

    def _add(self, name, acc: Access, value: Expr, extents: dict) -> None:
        order: list[str] = []
        found: dict[str, Bound] = {}
        for a in (acc,) + _loads(value):
            shape = self._arrays[a.array].shape
            for k, ix in enumerate(a.index):
                if ix.dim is None:
                    continue
                if ix.dim not in order:
                    order.append(ix.dim)
                if ix.coef == 1 and ix.offset == 0 and ix.dim not in found:
                    found[ix.dim] = shape[k]
        found.update({d: bound(e) for d, e in extents.items()})
        missing = [d for d in order if d not in found]
        if missing:
            fail(f"no extent for dimension(s) {missing}", hint="pass extents={'i': 'n', ...}")
        pos = {d: k for k, d in enumerate(order)}
        st = Statement(name or f"S{len(self._statements)}", tuple(order),
                       tuple(found[d] for d in order), (Store(_bind(acc, pos), _bind_expr(value, pos)),))
        self._statements.append(st)


def _loads(e: Expr):
    if isinstance(e, Load):
        return (e.access,)
    if isinstance(e, Bin):
        return _loads(e.left) + _loads(e.right)
    if isinstance(e, Call):
        return _loads(e.arg)
    return ()


def _bind(acc: Access, pos) -> Access:
    return Access(acc.array, tuple(ix if ix.dim is None else replace(ix, dim=pos[ix.dim])
                                   for ix in acc.index))


def _bind_expr(e: Expr, pos) -> Expr:
    if isinstance(e, Load):
        return Load(_bind(e.access, pos))
    if isinstance(e, Bin):
        return Bin(e.op, _bind_expr(e.left, pos), _bind_expr(e.right, pos))
    if isinstance(e, Call):
        return Call(e.fn, _bind_expr(e.arg, pos))
    return e
