"""Strided views of flat base arrays and the overlap test that decides fusibility.

A :class:`View` is ``(offset, shape, strides)`` in *elements* of a flat base
array; dimensions of extent 1 carry stride 0 so equal views compare equal.
A view may also *wrap* (``np.roll`` read in place): ``wrap[d] = s`` (``0 < s <
shape[d]``) means element ``i`` of the view is the element of the unwrapped
view at index ``(i[d] + s) mod shape[d]`` along ``d``; ``wrap`` is ``()`` when no
dimension wraps (:func:`make_view` normalises it; :func:`rolled` composes rolls).
A wrapped view addresses exactly the elements of its unwrapped view (a
permutation along each wrapped axis), so :func:`overlap` ignores the wrap, while
equality does not: a write and a wrapped read of the same elements are *not*
identical views, so the graph never fuses them (Bohrium's rule, see
:mod:`.graph`).
:func:`overlap` is sound: ``False`` only when the two views provably share no
element (disjoint address ranges, a gcd argument, or an exhaustive bounded
search of ``offset_a + sum(i*s) == offset_b + sum(j*t)``); anything it cannot
decide within its search budget counts as overlapping.
"""
from __future__ import annotations

from functools import lru_cache
from math import gcd, prod

from flamefuse.values import value

_set = object.__setattr__

SEARCH_BUDGET = 4096


@value(slots=True)
class View:
    """``(offset, shape, strides)`` in elements of a flat base array, and ``wrap`` (see the module
    doc). A frozen value (:mod:`flamefuse.values`)."""
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    wrap: tuple[int, ...] = ()

    def __init__(self, offset, shape, strides, wrap=()):
        _set(self, "offset", offset)
        _set(self, "shape", shape)
        _set(self, "strides", strides)
        _set(self, "wrap", wrap)

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def distinct(self) -> int:
        """Number of distinct elements addressed (broadcast dimensions count once)."""
        return prod(n for n, s in zip(self.shape, self.strides) if s != 0)


def make_view(offset: int, shape, strides, wrap=()) -> View:
    shape = tuple(int(n) for n in shape)
    strides = tuple(0 if n == 1 else int(s) for n, s in zip(shape, strides))
    wrap = tuple(int(w) % n if n > 1 and s else 0 for w, n, s in zip(wrap, shape, strides))
    return View(int(offset), shape, strides, wrap if any(wrap) else ())


def plain(view: View) -> View:
    """``view`` without its wrap (the same elements, unpermuted)."""
    return View(view.offset, view.shape, view.strides) if view.wrap else view


def rolled(view: View, axis: int, shift: int) -> View:
    """The view of ``np.roll(x, shift, axis)`` for ``x`` shown by ``view``: element ``i`` reads
    ``x`` at ``(i - shift) mod n`` along ``axis``, composed with ``view``'s own wrap."""
    wrap = list(view.wrap or (0,) * len(view.shape))
    wrap[axis] -= shift
    return make_view(view.offset, view.shape, view.strides, wrap)


@lru_cache(maxsize=4096)
def contiguous(shape) -> View:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return make_view(0, shape, tuple(reversed(strides)))


def _terms(view: View, sign: int):
    return [(sign * s, n - 1) for n, s in zip(view.shape, view.strides) if s != 0 and n > 1]


def _extent(view: View) -> tuple[int, int]:
    lo = hi = view.offset
    for n, s in zip(view.shape, view.strides):
        lo, hi = lo + min(0, s * (n - 1)), hi + max(0, s * (n - 1))
    return lo, hi


def overlap(a: View, b: View) -> bool:
    """May views ``a`` and ``b`` of the same base share an element? (A wrap permutes the
    elements of a view along an axis, so it never changes the answer.)"""
    if a.wrap or b.wrap:
        return _overlap(plain(a), plain(b))
    return _overlap(a, b)


@lru_cache(maxsize=1 << 16)
def _overlap(a: View, b: View) -> bool:
    if a.size == 0 or b.size == 0:
        return False
    (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
    if ahi < blo or bhi < alo:
        return False
    boxes = _box_overlap(a, b)
    if boxes is not None:
        return boxes
    terms = sorted(_terms(a, 1) + _terms(b, -1), key=lambda t: -abs(t[0]))
    target = b.offset - a.offset
    g = 0
    for c, _ in terms:
        g = gcd(g, c)
    if g and target % g:
        return False
    if not terms:
        return target == 0
    budget = [SEARCH_BUDGET]
    return _solvable(terms, target, budget) or budget[0] <= 0


def _extents(v: View) -> dict | None:
    """Stride -> extent of ``v``'s moving dimensions (None when two share a stride)."""
    ext = {}
    for n, st in zip(v.shape, v.strides):
        if st != 0 and n > 1:
            if st in ext:
                return None
            ext[st] = n
    return ext


def _box(v: View, ext: dict, strides) -> tuple | None:
    """``(low corner, high corner, remainder)`` of ``v`` in the mixed-radix coordinates of
    ``strides`` (each dividing the one before), or None where a dimension wraps into the next."""
    lo, hi, rest = [], [], v.offset
    for k, s in enumerate(strides):
        c, rest = divmod(rest, s)
        n = ext.get(s, 1)
        if k and c + n - 1 >= strides[k - 1] // s:
            return None
        lo.append(c)
        hi.append(c + n - 1)
    return lo, hi, rest


def _box_overlap(a: View, b: View) -> bool | None:
    """Exact answer when both views are boxes over one chain of positive strides (slices
    of one array: ``a[k+1:, k:]``, ``a[k+1:, k]`` and ``a[k, k:]``), else None."""
    ea, eb = _extents(a), _extents(b)
    if ea is None or eb is None:
        return None
    strides = sorted(set(ea) | set(eb), reverse=True)
    if not strides or strides[-1] < 0 or any(p % q for p, q in zip(strides, strides[1:])):
        return None
    ba, bb = _box(a, ea, strides), _box(b, eb, strides)
    if ba is None or bb is None:
        return None
    if ba[2] != bb[2]:
        return False
    return all(l1 <= h2 and l2 <= h1 for l1, h1, l2, h2 in zip(ba[0], ba[1], bb[0], bb[1]))


def _solvable(terms, target: int, budget: list) -> bool:
    """Is ``sum(c*x) == target`` solvable with ``0 <= x <= m`` for each (c, m)?"""
    if not terms:
        return target == 0
    budget[0] -= 1
    if budget[0] <= 0:
        return True
    (c, m), rest = terms[0], terms[1:]
    rlo = sum(min(0, cc * mm) for cc, mm in rest)
    rhi = sum(max(0, cc * mm) for cc, mm in rest)
    # need rlo <= target - c*x <= rhi
    lo_x, hi_x = sorted(((target - rhi) / c, (target - rlo) / c))
    for x in range(max(0, -int(-lo_x // 1)), min(m, int(hi_x // 1)) + 1):
        if _solvable(rest, target - c * x, budget):
            return True
        if budget[0] <= 0:
            return True
    return False


def grid(size: int, views) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A C-contiguous reshape of a flat base in which each of ``views`` moves by whole steps.

    Returns ``(steps, shape)``: the reshape's strides (every distinct non-zero
    view stride, descending, each dividing the one before) and its shape, when
    such a reshape of ``size`` elements exists and every view stays inside it
    (:func:`grid_index`); else the flat base, ``((1,), (size,))``. A kernel
    indexing ``base.reshape(shape)[c0 + i0, c1 + i1]`` has unit-stride inner
    subscripts on a C-contiguous array, which Numba compiles far better than
    strided ('A' layout) views or flat index arithmetic.
    """
    steps = tuple(sorted({abs(s) for v in views for s in v.strides if s} | {1}, reverse=True))
    if len(steps) > 1 and size % steps[0] == 0 and all(a % b == 0 for a, b in zip(steps, steps[1:])):
        shape = (size // steps[0],) + tuple(a // b for a, b in zip(steps, steps[1:]))
        if all(grid_index(v, steps, shape) is not None for v in views):
            return steps, shape
    return (1,), (size,)


def grid_index(view: View, steps, shape) -> tuple | None:
    """Subscripts of ``view`` in the grid ``(steps, shape)``, or None where it leaves the grid.

    One ``(constant, ((view dim, multiplier), ...))`` per grid dimension: grid
    coordinate ``k`` of view element ``i`` is ``constant + sum(m * i[dim])``,
    and ``sum(steps[k] * coordinate[k])`` is the element's flat address.
    """
    consts, rest = [], view.offset
    for g in steps:
        consts.append(rest // g)
        rest -= consts[-1] * g
    terms = [[] for _ in steps]
    for j, s in enumerate(view.strides):
        if s:
            k = next(k for k, g in enumerate(steps) if s % g == 0)
            terms[k].append((j, s // steps[k]))
    if view.size:
        for c, ts, n in zip(consts, terms, shape):
            lo = c + sum(min(0, m * (view.shape[j] - 1)) for j, m in ts)
            hi = c + sum(max(0, m * (view.shape[j] - 1)) for j, m in ts)
            if lo < 0 or hi >= n:
                return None
    return tuple((c, tuple(ts)) for c, ts in zip(consts, terms))
