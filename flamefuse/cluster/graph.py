"""The dependency graph and the facts the ILP needs (Robinson et al. §1.3.5–1.4.5).

:func:`build` returns a :class:`Graph` over the program's bindings (node i
is binding i, named by its first output):

* ``iters[i]``: iteration size (``None`` = ⊥, an ``external``);
* ``edges``: ``{(producer, consumer): fusible}``; fusion-preventing are
  edges from a fold (its scalar), from an external, into an external, and
  a gather's data and a cross's second argument (read at random);
* ``trans[i]``: the parent transducer (the filter whose output size is i's
  iteration size), using the corrected ``trans`` (fold and filter take the
  transducer of their input, map the union over its inputs);
* :meth:`Graph.concestors`: the compatible concestors of two nodes, the
  nearest pair of transducer ancestors with one iteration size;
* :meth:`Graph.possible` / :meth:`Graph.may_fuse`: no fusion-preventing
  path between them (and their concestors), sizes compatible;
* :meth:`Graph.weight`: N² for an edge or a shared input array, else 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from flamefuse.cluster.program import Program
from flamefuse.cluster.sizes import Sizes, infer


@dataclass(frozen=True, eq=False)
class Graph:
    program: Program
    names: tuple[str, ...]
    iters: tuple
    edges: dict            # (i, j) -> True if fusible
    trans: tuple           # parent transducer index or None
    inputs: tuple          # per node: frozenset of array names read
    arrays: tuple          # per node: produces an array
    sizes: Sizes

    @property
    def n(self) -> int:
        return len(self.names)

    @cached_property
    def fp_reach(self) -> tuple[int, ...]:
        """Bitsets: j in fp_reach[i] iff a path i → j has a fusion-preventing edge."""
        reach = [0] * self.n
        fp = [0] * self.n
        for i in reversed(range(self.n)):
            for (a, j), fusible in self.edges.items():
                if a == i:
                    reach[i] |= (1 << j) | reach[j]
                    fp[i] |= fp[j] | (0 if fusible else (1 << j) | reach[j])
        return tuple(fp)

    def possible(self, a: int, b: int) -> bool:
        return not (self.fp_reach[a] >> b & 1 or self.fp_reach[b] >> a & 1)

    def concestors(self, a: int, b: int):
        """(A, B): compatible concestors of a and b, or None."""
        found = self._concestors(a, b)
        return found[:2] if found else None

    @cached_property
    def _memo(self) -> dict:
        return {}

    def _concestors(self, a: int, b: int):
        """(A, B, distance) per Fig. 1.8, memoised."""
        key = (a, b)
        if key not in self._memo:
            self._memo[key] = self._concestors_uncached(a, b)
        return self._memo[key]

    def _concestors_uncached(self, a: int, b: int):
        if self.iters[a] is None or self.iters[b] is None:
            return None
        if self.iters[a] == self.iters[b]:
            return (a, b, 0)
        left = self._concestors(self.trans[a], b) if self.trans[a] is not None else None
        right = self._concestors(a, self.trans[b]) if self.trans[b] is not None else None
        best = min((p for p in (left, right) if p), key=lambda p: p[2], default=None)
        return best and (best[0], best[1], best[2] + 1)

    def may_fuse(self, a: int, b: int, same_size_only: bool = False) -> bool:
        """Whether a and b may share a cluster at all (Fig. 1.14's conditions)."""
        if a == b:
            return True
        if self.iters[a] is None or self.iters[b] is None or not self.possible(a, b):
            return False
        if self.iters[a] == self.iters[b]:
            return True
        if same_size_only:
            return False
        con = self.concestors(a, b)
        return con is not None and self.possible(con[0], a) and \
            self.possible(con[1], b) and self.possible(*con)

    def weight(self, a: int, b: int) -> int:
        if (a, b) in self.edges or (b, a) in self.edges or self.inputs[a] & self.inputs[b]:
            return self.n * self.n
        return 1


def build(program: Program, sizes: Sizes | None = None) -> Graph:
    sizes = sizes or infer(program)
    prod = program.producer()
    bs = program.bindings
    edges: dict[tuple[int, int], bool] = {}

    def add(src: str, j: int, fusible: bool):
        if src in prod:
            i = prod[src]
            fusible = fusible and bs[i].kind not in ("fold", "external") \
                and src not in bs[i].scalar_outputs
            edges[(i, j)] = edges.get((i, j), True) and fusible

    for j, b in enumerate(bs):
        barrier = b.kind == "external"
        for s in b.scalar_inputs:
            add(s, j, not barrier)
        for k, a in enumerate(b.arrays):
            random_access = (b.kind == "gather" and k == 0) or (b.kind == "cross" and k == 1)
            add(a, j, not (barrier or random_access))

    @lru_cache(maxsize=None)
    def array_trans(name: str):
        if name not in prod:
            return None
        b = bs[prod[name]]
        if b.kind == "filter":
            return prod[name]
        if b.kind == "map":
            found = {array_trans(a) for a in b.arrays} - {None}
            return min(found) if found else None
        if b.kind == "gather":
            return array_trans(b.arrays[1])
        return None

    def trans(b):
        if b.kind in ("fold", "filter", "map"):
            found = {array_trans(a) for a in b.arrays} - {None}
            return min(found) if found else None
        return array_trans(b.arrays[1]) if b.kind == "gather" else None

    return Graph(program, tuple(b.name for b in bs), sizes.iters, edges,
                 tuple(trans(b) for b in bs), tuple(frozenset(b.arrays) for b in bs),
                 tuple(bool(b.array_outputs) for b in bs), sizes)
