"""Size inference with rigid (existential) sizes, after Robinson et al. §1.3.

Each array gets a size type: a variable ``k`` or a product ``k1 × k2``.
Parameters and ``map`` results get flexible (unification) variables;
``filter``, ``generate`` and ``external`` outputs get fresh *rigid*
variables that unify with nothing but themselves.  ``map`` requires all its
inputs and its output to have one size; ``gather`` has its indices' size;
``cross`` has the product of its inputs' sizes.

A program is rejected (FlameError naming the offending binding) when two
different rigid sizes must be equal (``map2`` of two filters) or when a
parameter's size would have to be rigid (``map2`` of a filter with its own
source).  :func:`infer` returns :class:`Sizes`: each array's solved size, each
binding's iteration size (``None`` = ⊥ for ``external``), and the program's
size scheme, e.g. ``∀k1. ∃k2. (xs:k1) → (ys1:k1, ys2:k2)``.
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.cluster.program import Program
from flamefuse.errors import fail


@dataclass(frozen=True)
class Var:
    ident: int
    rigid: bool


@dataclass(frozen=True)
class Prod:
    left: "Var | Prod"
    right: "Var | Prod"


Size = Var | Prod


@dataclass(frozen=True)
class Sizes:
    arrays: dict            # array name -> solved Size
    iters: tuple            # per binding: solved Size, or None (⊥)
    scheme: str


class _Solver:
    def __init__(self):
        self.subst: dict[Var, Size] = {}
        self.count = 0

    def fresh(self, rigid: bool) -> Var:
        self.count += 1
        return Var(self.count, rigid)

    def resolve(self, t: Size) -> Size:
        while isinstance(t, Var) and t in self.subst:
            t = self.subst[t]
        if isinstance(t, Prod):
            return Prod(self.resolve(t.left), self.resolve(t.right))
        return t

    def occurs(self, v: Var, t: Size) -> bool:
        return t == v if isinstance(t, Var) else self.occurs(v, t.left) or self.occurs(v, t.right)

    def unify(self, a: Size, b: Size) -> bool:
        a, b = self.resolve(a), self.resolve(b)
        if a == b:
            return True
        for v, t in ((a, b), (b, a)):
            if isinstance(v, Var) and not v.rigid and not self.occurs(v, t):
                self.subst[v] = t
                return True
        if isinstance(a, Prod) and isinstance(b, Prod):
            return self.unify(a.left, b.left) and self.unify(a.right, b.right)
        return False


def rigid_vars(t: Size) -> set[Var]:
    if isinstance(t, Var):
        return {t} if t.rigid else set()
    return rigid_vars(t.left) | rigid_vars(t.right)


def show(t: Size, names: dict[Var, str]) -> str:
    if isinstance(t, Var):
        return names.setdefault(t, f"k{len(names) + 1}")
    return f"({show(t.left, names)} × {show(t.right, names)})"


def infer(program: Program) -> Sizes:
    s = _Solver()
    size: dict[str, Size] = {x: s.fresh(False) for x in program.array_params}
    origin: dict[Var, str] = {}
    for b in program.bindings:
        where = dict(file=program.file, line=b.line or None, col=b.col or None)
        if b.kind == "map":
            out = s.fresh(False)
            for a in b.arrays:
                if not s.unify(size[a], out):
                    _mismatch(b, size, s, origin, where)
            size[b.name] = out
            _check_params(program, b, size, s, origin, where)
        elif b.kind in ("filter", "generate"):
            v = size[b.name] = s.fresh(True)
            origin[v] = b.name
        elif b.kind == "gather":
            size[b.name] = size[b.arrays[1]]
        elif b.kind == "cross":
            size[b.name] = Prod(size[b.arrays[0]], size[b.arrays[1]])
        elif b.kind == "external":
            for o in b.array_outputs:
                v = size[o] = s.fresh(True)
                origin[v] = o
    arrays = {x: s.resolve(t) for x, t in size.items()}
    iters = tuple(_iter(b, arrays) for b in program.bindings)
    return Sizes(arrays, iters, _scheme(program, arrays))


def _iter(b, arrays) -> Size | None:
    if b.kind in ("fold", "filter"):
        return arrays[b.arrays[0]]
    if b.kind in ("map", "generate", "cross"):
        return arrays[b.name]
    if b.kind == "gather":
        return arrays[b.arrays[1]]
    return None


def _describe(a: str, t: Size, origin) -> str:
    rigid = sorted(rigid_vars(t), key=lambda v: v.ident)
    if not rigid:
        return f"{a!r}"
    return f"{a!r} (size fixed by {origin[rigid[0]]!r}, known only at run time)"


def _mismatch(b, size, s, origin, where):
    args = ", ".join(_describe(a, s.resolve(size[a]), origin) for a in dict.fromkeys(b.arrays))
    fail(f"size error in {b.kind} {b.name!r}: its inputs {args} need not have the same size",
         hint="each filter (or generate, external) output has its own data-dependent size; "
              "map only arrays derived from the same one", **where)


def _check_params(program, b, size, s, origin, where):
    for x in program.array_params:
        rigid = rigid_vars(s.resolve(size[x]))
        if rigid:
            src = origin[min(rigid, key=lambda v: v.ident)]
            fail(f"size error in {b.kind} {b.name!r}: it would need parameter {x!r} to have "
                 f"the data-dependent size of {src!r}",
                 hint=f"{src!r} may be shorter than {x!r}; a map's inputs must have one size",
                 **where)


def _scheme(program: Program, arrays) -> str:
    names: dict[Var, str] = {}
    ins = ", ".join(f"{x}:{show(arrays[x], names)}" for x in program.array_params)
    universal = list(names.values())
    outs = ", ".join(f"{x}:{show(arrays[x], names)}" for x in program.returns if x in arrays)
    exist = [n for v, n in names.items() if v.rigid]
    quant = (f"∀{' '.join(universal)}. " if universal else "") + \
        (f"∃{' '.join(exist)}. " if exist else "")
    return f"{quant}({ins}) → ({outs})"
