"""Strided views of flat base arrays and the overlap test that decides fusibility.

A :class:`View` is ``(offset, shape, strides)`` in *elements* of a flat base
array; dimensions of extent 1 carry stride 0 so equal views compare equal.
:func:`overlap` is sound: ``False`` only when the two views provably share no
element (disjoint address ranges, a gcd argument, or an exhaustive bounded
search of ``offset_a + sum(i*s) == offset_b + sum(j*t)``); anything it cannot
decide within its search budget counts as overlapping.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import gcd, prod

SEARCH_BUDGET = 4096


@dataclass(frozen=True, slots=True)
class View:
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def distinct(self) -> int:
        """Number of distinct elements addressed (broadcast dimensions count once)."""
        return prod(n for n, s in zip(self.shape, self.strides) if s != 0)


def make_view(offset: int, shape, strides) -> View:
    shape = tuple(int(n) for n in shape)
    return View(int(offset), shape, tuple(0 if n == 1 else int(s) for n, s in zip(shape, strides)))


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
    """May views ``a`` and ``b`` of the same base share an element?"""
    if a.size == 0 or b.size == 0:
        return False
    (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
    if ahi < blo or bhi < alo:
        return False
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
