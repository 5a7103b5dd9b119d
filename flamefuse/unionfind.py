"""The one union-find (disjoint sets): which items a set of pairs ties together.

``DisjointSets(n=None)``
    Sets of hashable items, each item its own set until joined (items appear at first use);
    with ``n``, of the integers ``0 .. n-1``.
    ``find(x)`` is the representative of x's set (path halving); ``union(a, b)`` joins two
    sets; ``groups(items)`` the sets of ``items``, each in the order of ``items``, the sets in
    the order of their first member.
``groups(n, pairs) -> list[list[int]]``
    The connected components of the nodes ``0 .. n-1`` under ``pairs``: ascending members,
    components ordered by their smallest member (the order every caller relies on, whichever
    representative a set has).

Used by the runtime partitioner's branch and bound (:mod:`flamefuse.runtime.partition`), the
clustering ILP (:mod:`flamefuse.cluster.clusters`) and the dimension classes of a spec
(:mod:`flamefuse.derive.dims`). Standard library only, imported by no one at start-up.
"""
from __future__ import annotations

from typing import Hashable, Iterable

__all__ = ["DisjointSets", "groups"]


class DisjointSets:
    def __init__(self, n: int | None = None):
        """Sets of any hashable items; with ``n``, of the integers ``0 .. n-1`` only (a list
        instead of a dict: twice as fast, for the partitioner's branch and bound)."""
        self.parent: dict | list = {} if n is None else list(range(n))

    def find(self, x: Hashable):
        parent = self.parent
        if type(parent) is dict:
            parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: Hashable, b: Hashable) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def groups(self, items: Iterable) -> list[list]:
        out: dict = {}
        for x in items:
            out.setdefault(self.find(x), []).append(x)
        return list(out.values())


def groups(n: int, pairs: Iterable[tuple[int, int]]) -> list[list[int]]:
    # DisjointSets(n) inlined: the partitioner's branch and bound calls this once per node
    # (up to 20000 times), and the method calls cost a quarter more
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    out: dict = {}
    for x in range(n):
        out.setdefault(find(x), []).append(x)
    return list(out.values())
