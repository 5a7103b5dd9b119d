"""The value of every block version: numeric twins on several random instantiations, and optionally a SymPy form.

``Values().run(seq)`` follows a fine-task sequence from the original blocks
and records the value of every version it passes through: ``vals[ref]`` is a
:class:`Val`:

* ``num``: the value evaluated on fixed random blocks, 3 x 3 for a grid
  dimension and 3 x 2 / 2 x 3 for an undivided one (the *first
  instantiation*: the algebra's search finds its candidates on these numbers);
* ``alt``: the same value on the further instantiations of ``TWINS``
  (``Values(twins=n)``, the first ``n`` of them): other seeds and other sizes
  (4 x 4 grid blocks with 3-wide undivided dimensions, 5 x 5 with 4), chosen
  independently of any candidate, so they can decide whether a candidate
  equals its goal (:func:`same`, below);
* ``sym``: with ``Values(symbolic=True)`` a SymPy matrix expression over the
  original blocks (``MatrixSymbol`` s named ``A11``, ``L20``, with ``Inverse`` /
  ``Transpose``); with ``symbolic=False`` a :class:`Tag` (a fresh object per
  value) and SymPy is not imported.

Block kernels the algebra does not reason about (``chol``, ``lu``, ``ul``,
the pivoted panel) are opaque functions of their argument: symbols named after
their argument (the same kernel of the same value is the same symbol in every
sequence), and on the numbers a fixed function of the argument, one per kernel
on the further instantiations (``tanh(W * X + 0.2 M X N) + I``, ``W``, ``M``, ``N``
random per kernel and instantiation, so two different kernels never coincide
there; the first instantiation keeps ``tanh(X) + I`` for all: :func:`kernel_twin`).  ``unit_lower(X)`` and ``upper(X)``
of a general block are opaque symbols too, but their numbers are the real
triangles; the triangle a ``trinv`` wrote is known to hold the inverse of the
triangle it read.  Every other task's numbers are what it computes
(``sylv`` solves the Sylvester equation, :func:`sylvester`).

``apply(task, read)`` is the value a task leaves in its target, given ``read``
(a Fac -> Val function): the one place that states what each fine task
computes, used for the sequences and for checking a derived update.

``same(x, y)`` decides whether two values are equal (docs/derive-startup.md):
the numbers agree on every instantiation; and, when both carry SymPy forms,
SymPy proves the difference zero (the exact cross-check,
``FLAMEFUSE_DERIVE_PROVE=1``).  Every value is a real-analytic function of
the random original blocks (sums, products, inverses, transposes, triangles,
``tanh``, the Sylvester solve), so a difference that is not identically zero
vanishes on a set of measure zero (the Schwartz-Zippel argument for rational
functions, extended to analytic ones): numbers that agree on instantiations
chosen independently of the candidate prove the identity with probability 1.
The first instantiation alone would not do: the candidates are found on it.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from flamefuse.derive.blocks import Blk, Fac, FineTask, Ref, blk_name
from flamefuse.derive.evaluate import Unsupported

GRID, WHOLE = 3, 2                      # numeric sizes of a grid block and of an undivided dimension
TWINS = ((4, 3), (5, 4))                # (grid, undivided) sizes of the further instantiations
TOL = 1e-9                              # agreement: relative to the largest entry (at least 1)


def sympy():
    """SymPy, imported on first use (about 0.2 s: only ``FLAMEFUSE_DERIVE_PROVE=1`` and the tests pay it)."""
    import sympy as sp
    return sp


def sylvester(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """X with A X + X B = Q, through the Kronecker form (I (x) A + B^T (x) I) vec(X) = vec(Q): exact
    for the small numeric twins (at most 20 unknowns here) and without importing scipy.linalg.  The
    Kronecker products are the products ``np.kron`` forms (entry ``[i, k, j, l]`` is ``x[i, j] y[k, l]``),
    made by broadcasting: the same numbers, without ``np.kron``'s overhead (three times the time of
    the solve on these sizes)."""
    m, n = q.shape
    k = (np.eye(n)[:, None, :, None] * a[None, :, None, :]
         + b.T[:, None, :, None] * np.eye(m)[None, :, None, :]).reshape(m * n, m * n)
    return np.linalg.solve(k, q.reshape(-1, order="F")).reshape((m, n), order="F")


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
    alt: tuple = ()                     # the value on the further instantiations (TWINS)

    @property
    def T(self) -> Val:
        return Val(self.sym.T, self.num.T, tuple(m.T for m in self.alt))


def each(f, *vals: Val) -> tuple:
    """``(num, alt)``: ``f(k, *matrices)`` on instantiation ``k`` of every value (0: the first)."""
    return (f(0, *(v.num for v in vals)),
            tuple(f(k, *ms) for k, ms in enumerate(zip(*(v.alt for v in vals)), 1)))


@lru_cache(maxsize=4096)
def _block(blk: Blk, grid: int, whole: int, seed: int) -> np.ndarray:
    """The random numbers of an original block (read-only: every derivation of the process shares
    them, as it shares the seeds)."""
    rng = np.random.default_rng(seed)
    num = rng.standard_normal((whole if blk.i is None else grid, whole if blk.j is None else grid)) * 0.3
    if blk.i is not None and blk.i == blk.j:
        num += 2.0 * np.eye(grid)
    num.setflags(write=False)
    return num


def original(blk: Blk, symbolic: bool = True, twins: int = 0) -> Val:
    """The initial value of a block: a MatrixSymbol (a Tag) and well-conditioned random matrices."""
    name = blk_name(blk)
    num = _block(blk, GRID, WHOLE, zlib.crc32(name.encode()))
    alt = tuple(_block(blk, g, w, zlib.crc32(f"{name}#{k}".encode())) for k, (g, w) in enumerate(TWINS[:twins], 1))
    if not symbolic:
        return Val(Tag(), num, alt)
    sp = sympy()
    rows = sp.Symbol("k" if blk.i is None else "b")
    cols = sp.Symbol("k" if blk.j is None else "b")
    return Val(sp.MatrixSymbol(name, rows, cols), num, alt)


def opaque(name: str, of: Val, nums: tuple) -> Val:
    """A value the algebra knows only as ``name`` of ``of``, with the numbers ``nums`` (``each``'s pair)."""
    if isinstance(of.sym, Tag):
        return Val(Tag(), *nums)
    return Val(sympy().MatrixSymbol(f"{name}({of.sym})", *of.sym.shape), *nums)


def kernel_twin(name: str, k: int, x: np.ndarray) -> np.ndarray:
    """The numbers of an opaque kernel ``name`` on instantiation ``k``: ``tanh(X) + I`` on the first;
    on the others ``tanh(W * X + 0.2 M X N) + I`` with ``W`` (entries in [0.5, 1.5)), ``M`` and ``N``
    (normal, scaled by the size) drawn for the kernel and the instantiation: every entry depends on
    every entry of ``X`` (an entrywise function would satisfy identities no kernel does, such as
    upper(f(X)) depending on upper(X) only), and the diagonal blocks stay well conditioned."""
    if k == 0:
        return np.tanh(x) + np.eye(*x.shape)
    r, c = x.shape
    rng = np.random.default_rng(zlib.crc32(f"{name}#{k}".encode()))
    w = 0.5 + rng.random(x.shape)
    m, n = rng.standard_normal((r, r)) / np.sqrt(r), rng.standard_normal((c, c)) / np.sqrt(c)
    return np.tanh(w * x + 0.2 * m @ x @ n) + np.eye(r, c)


def triangle(kind: str, m: np.ndarray) -> np.ndarray:
    """The unit-lower (``UL``) or upper (``UU``) triangle of a square block."""
    return np.tril(m, -1) + np.eye(len(m)) if kind == "UL" else np.triu(m)


class Values:
    """Block versions -> values, filled by running fine-task sequences from the original blocks."""

    def __init__(self, symbolic: bool = True, twins: int = 0):
        self.symbolic, self.twins = symbolic, twins
        self.vals: dict[Ref, Val] = {}
        self.views: dict[tuple[str, object], Val] = {}     # (kind, sym) -> value of that triangle view

    def __getitem__(self, ref: Ref) -> Val:
        if ref not in self.vals:
            if not ref.ver:
                self.vals[ref] = original(ref.blk, self.symbolic, self.twins)
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
        return v.T if f.trans else v

    def view(self, kind: str, v: Val) -> Val:
        if kind not in ("UL", "UU"):
            return v
        key = (kind, v.sym)
        if key not in self.views:
            self.views[key] = opaque("unit_lower" if kind == "UL" else "upper", v,
                                     each(lambda _, m: triangle(kind, m), v))
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
        al = t.alpha
        if t.kind == "acc":
            b = read(t.b)
            return Val(x.sym + al * a.sym * b.sym, *each(lambda _, xm, am, bm: xm + al * am @ bm, x, a, b))
        if t.kind == "copy":
            return Val(al * a.sym, *each(lambda _, am: al * am, a))
        if t.kind in ("trsm", "trmm"):
            m = Val(a.sym.I, *each(lambda _, am: np.linalg.inv(am), a)) if t.kind == "trsm" else a
            if t.side == "L":
                return Val(al * m.sym * x.sym, *each(lambda _, mm, xm: al * mm @ xm, m, x))
            return Val(al * x.sym * m.sym, *each(lambda _, mm, xm: al * xm @ mm, m, x))
        if t.kind == "trinv" and t.form in ("L", "U"):
            return Val(x.sym.I, *each(lambda _, xm: np.linalg.inv(xm), x))
        if t.kind == "trinv":                              # the unit-lower / upper triangle of a general block
            kind, other = t.form, "UU" if t.form == "UL" else "UL"
            inv = self.view(kind, x)
            inv = Val(inv.sym.I, *each(lambda _, m: np.linalg.inv(m), inv))
            out = opaque(f"trinv_{kind}", x, each(
                lambda _, xm, im: np.triu(xm) + np.tril(im, -1) if kind == "UL" else np.tril(xm, -1) + np.triu(im),
                x, inv))
            self.views[(kind, out.sym)] = inv
            self.views[(other, out.sym)] = self.view(other, x)
            return out
        if t.kind == "lauum":
            return Val(x.sym.T * x.sym, *each(lambda _, xm: xm.T @ xm, x))
        if t.kind == "sylv":
            b = read(t.b)
            nums = each(lambda _, am, bm, xm: sylvester(am, bm, xm), a, b, x)
            if isinstance(x.sym, Tag):
                return Val(Tag(), *nums)
            return Val(sympy().MatrixSymbol(f"sylv({a.sym}, {b.sym}, {x.sym})", *x.sym.shape), *nums)
        # kernels the algebra treats as opaque functions of their argument
        name = t.kind + t.form
        return opaque(name, x, each(lambda k, xm: kernel_twin(name, k, xm), x))


def agree(x: Val, y: Val) -> bool:
    """The numbers agree: on the first instantiation as ``np.allclose`` (1e-9), on the further ones
    within ``TOL`` times the largest entry of either side (at least 1)."""
    if x.num.shape != y.num.shape or not np.allclose(x.num, y.num, rtol=1e-9, atol=1e-9):
        return False
    if len(x.alt) != len(y.alt):
        raise ValueError("values from different sets of instantiations")
    return all(a.shape == b.shape and _gap(a, b) <= TOL for a, b in zip(x.alt, y.alt))


def _gap(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference of two matrices relative to their largest entry (at least 1)."""
    return float(np.abs(a - b).max(initial=0.0) / max(1.0, np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0)))


def proved(x: Val, y: Val) -> bool:
    """SymPy proves the forms equal (expand, cancel inverse products)."""
    diff = (x.sym - y.sym).expand().doit()
    return diff == 0 or isinstance(diff, sympy().ZeroMatrix) or diff.is_ZeroMatrix is True


def same(x: Val, y: Val) -> bool:
    """Equal values: the numbers agree on every instantiation, and where both values carry SymPy
    forms, SymPy proves them equal.  With Tags the numbers decide: at least one further
    instantiation is then required (the first one found the candidate)."""
    if not agree(x, y):
        return False
    if isinstance(x.sym, Tag) or isinstance(y.sym, Tag):
        if not x.alt:
            raise ValueError("deciding by numbers needs a further instantiation (Values(twins=...))")
        return True
    return proved(x, y)
