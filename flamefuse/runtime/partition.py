"""Partitioners for the Weighted Subroutine Partition problem (Kristensen et al.).

Every partitioner maps a :class:`~flamefuse.runtime.graph.Graph` to a legal
partition: a tuple of frozensets of op indices, in dependency order.

* ``singleton``   -- one block per op (no fusion).
* ``linear``      -- walk the ops; start a new block when the next cannot join.
* ``greedy``      -- repeatedly merge the pair of blocks with the largest saving;
  a pair whose merge is illegal (forbidden pair, or a path of length >= 2
  between them, i.e. a cycle) is dropped. Pairs that share a base but save
  nothing in the cost model (an array written in one block, alive, and read in
  the other) are merged last: the merged kernel reads the value from a register
  instead of memory and makes one pass less (life: 7 blocks instead of 9).
* ``unintrusive`` -- merge only pairs that can never hurt: one side shares data
  and dependencies with the other side only, and adds no forbidden partner.
* ``optimal``     -- unintrusive first, greedy as the bound, then branch and
  bound over the merge edges sorted by saving, pruning on cost (the cost is
  monotone), on repeated partitions with no new choices, and stopping at
  legal partitions; ``optimal_search`` also says
  whether the search finished within its node budget (proved optimal).
* ``cpsat``       -- exact CP-SAT model (:mod:`flamefuse.runtime.cpsat`).

``PARTITIONERS`` maps the names to functions; ``partition_costs(graph)`` gives
each partitioner's cost (the paper's theoretical partition cost figure).
"""
from __future__ import annotations

from itertools import compress

from flamefuse import unionfind
from flamefuse.runtime.graph import Graph, block_cost, block_edges, cost, is_legal, topo_order

OPTIMAL_BUDGET = 20000


def ordered(graph: Graph, blocks) -> tuple[frozenset, ...]:
    blocks = [frozenset(b) for b in blocks]
    order = topo_order(graph, blocks)
    assert order is not None, "partition has a cycle"
    return tuple(blocks[k] for k in order)


def singleton(graph: Graph):
    return tuple(frozenset([i]) for i in range(graph.n))


def _forbidden_between(graph: Graph, a, b) -> bool:
    return any((min(x, y), max(x, y)) in graph.forbidden for x in a for y in b)


def linear(graph: Graph):
    blocks, current = [], []
    for i in range(graph.n):
        if current and _forbidden_between(graph, current, [i]):
            blocks.append(frozenset(current))
            current = []
        current.append(i)
    if current:
        blocks.append(frozenset(current))
    return tuple(blocks)


class _State:
    """Blocks being merged, with memoised block costs (internal to one partitioner run)."""

    def __init__(self, graph: Graph, blocks):
        self.graph, self.blocks = graph, [frozenset(b) for b in blocks]
        self.memo = {}

    def bcost(self, block) -> int:
        if block not in self.memo:
            self.memo[block] = block_cost(self.graph, block)
        return self.memo[block]

    def saving(self, a, b) -> int:
        return self.bcost(a) + self.bcost(b) - self.bcost(a | b)

    def pairs(self):
        """Index pairs of blocks that share a base (the only pairs with a saving)."""
        touching, shapes = {}, self.graph.shapes
        for k, blk in enumerate(self.blocks):
            shape = shapes[next(iter(blk))] if shapes else None    # blocks of two shapes never merge
            for base in {r[0] for i in blk for r in self.graph.resources[i]}:
                touching.setdefault((base, shape), set()).add(k)
        return {(a, b) for ks in touching.values() for a in ks for b in ks if a < b}

    def legal(self, a: int, b: int, edges=None) -> bool:
        if _forbidden_between(self.graph, self.blocks[a], self.blocks[b]):
            return False
        edges = edges if edges is not None else block_edges(self.graph, self.blocks)
        return not (_long_path(edges, a, b) or _long_path(edges, b, a))

    def merge(self, a: int, b: int) -> None:
        merged = self.blocks[a] | self.blocks[b]
        self.blocks = [blk for k, blk in enumerate(self.blocks) if k not in (a, b)] + [merged]


def _long_path(edges: dict, src: int, dst: int) -> bool:
    """Is there a path of length >= 2 from src to dst?"""
    stack, seen = [t for t in edges[src] if t != dst], set()
    while stack:
        k = stack.pop()
        if k == dst:
            return True
        if k not in seen:
            seen.add(k)
            stack.extend(edges[k])
    return False


def greedy(graph: Graph, start=None):
    state = _State(graph, start if start is not None else singleton(graph))
    dropped = set()
    while True:
        # candidates by decreasing saving (ties: pair order, as one max-pick per round); the
        # first legal one merges, the ones before it are dropped for good (as they would be
        # one round each); forbidden pairs are dropped before any saving is computed
        cands = []
        for a, b in state.pairs():
            key = frozenset((state.blocks[a], state.blocks[b]))
            if key in dropped:
                continue
            if _forbidden_between(graph, state.blocks[a], state.blocks[b]):
                dropped.add(key)
                continue
            cands.append((state.saving(state.blocks[a], state.blocks[b]), a, b, key))
        cands.sort(key=lambda c: -c[0])
        edges = block_edges(graph, state.blocks) if cands else None
        for _, a, b, key in cands:
            if state.legal(a, b, edges):
                state.merge(a, b)
                break
            dropped.add(key)
        else:
            return tuple(state.blocks)


def _neighbours(state: _State, edges: dict, pairs, k: int):
    weight = {b if a == k else a for a, b in pairs if k in (a, b)
              and state.saving(state.blocks[a], state.blocks[b]) > 0}
    deps = set(edges[k]) | {j for j, ss in edges.items() if k in ss}
    return weight, deps


def _theta(state: _State, k: int) -> set:
    return {j for j in range(len(state.blocks))
            if j != k and _forbidden_between(state.graph, state.blocks[k], state.blocks[j])}


def unintrusive(graph: Graph, start=None):
    state = _State(graph, start if start is not None else singleton(graph))
    while True:
        edges, pairs = block_edges(graph, state.blocks), state.pairs()
        found = None
        for a, b in sorted(pairs):
            if state.saving(state.blocks[a], state.blocks[b]) <= 0 or not state.legal(a, b, edges):
                continue
            for u, v in ((a, b), (b, a)):
                weight, deps = _neighbours(state, edges, pairs, u)
                if weight <= {v} and deps <= {v} and _theta(state, u) <= _theta(state, v) | {v}:
                    found = (a, b)
                    break
            if found:
                break
        if not found:
            return tuple(state.blocks)
        state.merge(*found)


def optimal_search(graph: Graph, budget: int = OPTIMAL_BUDGET):
    """Branch and bound; returns ``(blocks, proved_optimal)``."""
    base = _State(graph, unintrusive(graph))
    blocks0 = base.blocks
    best = list(greedy(graph, blocks0))
    best_cost = cost(graph, best)
    dep = block_edges(graph, blocks0)
    cand = {}
    for a in range(len(blocks0)):
        for b in range(a + 1, len(blocks0)):
            if _forbidden_between(graph, blocks0[a], blocks0[b]):
                continue
            s = base.saving(blocks0[a], blocks0[b])
            if s > 0 or b in dep[a] or a in dep[b]:
                cand[(a, b)] = s
    edges = sorted(cand, key=lambda e: -cand[e])
    stack, nodes, seen = [((1,) * len(edges), 0)], 0, {}
    while stack and nodes < budget:
        mask, off = stack.pop()
        part = [frozenset().union(*(blocks0[k] for k in comp))
                for comp in unionfind.groups(len(blocks0), compress(edges, mask))]
        key, removable = frozenset(part), frozenset(i for i in range(off, len(edges)) if mask[i])
        if any(removable <= r for r in seen.get(key, ())):
            continue          # dominated: the same partition with at least these choices left
        seen.setdefault(key, []).append(removable)
        nodes += 1
        c = sum(base.bcost(b) for b in part)
        if c >= best_cost:
            continue
        if is_legal(graph, part):
            best, best_cost = part, c
            continue
        for i in range(len(edges) - 1, off - 1, -1):
            if mask[i]:
                stack.append((mask[:i] + (0,) + mask[i + 1:], i + 1))
    return tuple(best), not stack


def optimal(graph: Graph):
    return optimal_search(graph)[0]


def cpsat(graph: Graph):
    from flamefuse.runtime.cpsat import solve    # OR-Tools only when this partitioner runs
    return solve(graph, hint=ordered(graph, greedy(graph)))[0]


PARTITIONERS = {
    "singleton": singleton,
    "linear": linear,
    "greedy": greedy,
    "unintrusive": unintrusive,
    "optimal": optimal,
    "cpsat": cpsat,
}


def greedy_from_linear(graph: Graph):
    """greedy, starting from linear's blocks (runs of consecutive fusible ops) instead of one
    op per block: far fewer blocks to pair up on a long program, cost at most linear's."""
    return greedy(graph, start=linear(graph))


def partition(graph: Graph, name: str) -> tuple[frozenset, ...]:
    """Run the named partitioner (or ``greedy_from_linear``); the result is legal and in
    dependency order."""
    blocks = ordered(graph, (greedy_from_linear if name == "greedy_from_linear" else PARTITIONERS[name])(graph))
    assert is_legal(graph, blocks), f"partitioner {name} returned an illegal partition"
    return blocks


def partition_costs(graph: Graph) -> dict[str, int]:
    """Each partitioner's cost for the recorded program (bytes of external accesses)."""
    return {name: cost(graph, partition(graph, name)) for name in PARTITIONERS}
