"""After - Before by algebra: the update when the before-state holds a term the after-state lacks.

The mechanical rule (``loop._update``) takes the update as the after-state's
fine tasks the before-state lacks.  That fails when the before-state holds a
term the after-state does not: trinv's invariant {TL done, BL := L_BR^{-1} L_BL}
has ``L10 := L11^{-1} L10`` before the step, and the after-state wants
``L10 = -L11^{-1} L10 L00^{-1}``; ``L20 = L22^{-1} (L20 - L21 L10)`` must
become ``L22^{-1} L20``.  Here the value of every block in both states is
known on random instantiations of the original blocks (and, with
``FLAMEFUSE_DERIVE_PROVE=1``, as a SymPy matrix expression: :mod:`.values`),
and for each such block an update is looked for in the forms

    T = alpha op_l( op_r( C + pre ) ) + post

where ``C`` is the block's value before the step, ``T`` after it, ``op_l`` /
``op_r`` a multiplication with a triangular block or its inverse from the
left / right (trmm / trsm, either may be absent), and ``pre`` / ``post`` at
most two products ``+-P Q`` of blocks (gemm), each block as it is before the
step or after it.  Candidates are found on the first instantiation
(``Search.candidates``, simplest first) and the first one accepted by
:func:`~flamefuse.derive.values.same` is taken: its numbers agree with ``T`` on
the further instantiations, drawn independently of the candidate (an identity
with probability 1), and with ``FLAMEFUSE_DERIVE_PROVE=1`` SymPy proves it too
(expand, cancel ``X^{-1} X``); so the trinv example gives ``L21 := L22^{-1} L21;
L20 += L21 L10; L10 := -L10 L00`` (L00 already holds L00^{-1}): the term
cancels by ``L22^{-1} L20 = (L20 - L21 L10) + L22^{-1} L21 L10``.

The blocks whose before-value the after-state extends keep their mechanical
tasks; reads of the re-derived blocks are redirected to their new versions.
``check(start, update, goal, vals)`` runs any update on the numbers and
compares every block with the after-state: no body leaves derivation
unchecked.
"""
from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from flamefuse.derive.blocks import TRI, Blk, Fac, FineTask, Ref, blk_name, inplace, render
from flamefuse.derive.evaluate import Unsupported
from flamefuse.derive.values import TWINS, Tag, Val, Values, same, sylvester
from flamefuse.switches import on

BEFORE, AFTER = "before", "after"
MAX_FACTORS = 48          # the search is quadratic in the factors for each candidate transform
_U = np.random.default_rng(7).standard_normal(8)


def _fp(m: np.ndarray) -> float:
    """A scalar fingerprint of a small matrix (equal matrices, equal fingerprints)."""
    return float(_U[:m.shape[0]] @ m @ _U[-m.shape[1]:][::-1])


class Search:
    """The update of one block in the forms above, over a pool of factors (block, state, kind, trans)."""

    def __init__(self, vals: Values, value, pool):
        self.vals, self.value = vals, value          # value(blk, state) -> Val
        self.factors = [(blk, st, kind, tr) for blk, kind, tr in pool for st in (BEFORE, AFTER)
                        for _ in [0] if self._known(blk, st)]
        self.nums = {f: self._num(f) for f in self.factors}
        if len(self.factors) > MAX_FACTORS:
            raise Unsupported(f"the update would have to cancel a term, and the {len(self.factors)} block values "
                              f"it could be built from are more than the algebra searches ({MAX_FACTORS})")

    def _known(self, blk, st) -> bool:
        try:
            self.value(blk, st)
            return True
        except (Unsupported, KeyError):
            return False

    def _val(self, f) -> Val:
        blk, st, kind, tr = f
        v = self.vals.view(kind, self.value(blk, st))
        return v.T if tr else v

    def _num(self, f) -> np.ndarray:
        return self._val(f).num

    def products(self, shape, exclude):
        """(fingerprint, sign, P, Q, P Q) for every product of two pool factors of the target's shape."""
        out = []
        for p, q in itertools.product(self.factors, repeat=2):
            if exclude in (p[0], q[0]) or p[2] in TRI and q[2] in TRI:
                continue
            a, b = self.nums[p], self.nums[q]
            if a.shape[1] != b.shape[0] or (a.shape[0], b.shape[1]) != shape:
                continue
            m = a @ b
            out += [(_fp(m), 1, p, q, m), (-_fp(m), -1, p, q, -m)]
        out.sort(key=lambda r: r[0])
        return out

    def sums(self, r: np.ndarray, prods, keys: np.ndarray | None = None):
        """At most two signed products summing to ``r`` (numerically), simplest first.  The
        fingerprint is linear, so the partner of each product is looked up at ``fp(r) - fp(P Q)``
        for all products at once (sorted keys, ``searchsorted``; ``keys``: the fingerprints of
        ``prods``, made here when not given)."""
        if np.allclose(r, 0, atol=1e-9):
            yield ()
        if keys is None:
            keys = np.fromiter((p[0] for p in prods), float, len(prods))
        f = _fp(r)
        lo, hi = np.searchsorted(keys, f - 1e-7, "left"), np.searchsorted(keys, f + 1e-7, "right")
        for k in range(lo, hi):
            if np.allclose(prods[k][4], r, atol=1e-9):
                yield (prods[k],)
        rest = f - keys
        lo, hi = np.searchsorted(keys, rest - 1e-7, "left"), np.searchsorted(keys, rest + 1e-7, "right")
        for i in np.flatnonzero(hi > lo):
            p = prods[i]
            left = r - p[4]
            for k in range(lo[i], hi[i]):
                q = prods[k]
                if q is not p and np.allclose(q[4], left, atol=1e-9):
                    yield (p, q)

    def transforms(self, shape):
        """(description, forward, backward) of at most one left and one right triangular product or solve."""
        tri = [f for f in self.factors if f[2] in TRI]
        ops = [(side, kind, f) for f in tri for side in ("L", "R") for kind in ("trmm", "trsm")
               if self.nums[f].shape[0] == (shape[0] if side == "L" else shape[1])]
        yield ()
        for op in ops:
            yield (op,)
        for l, r in itertools.product([o for o in ops if o[0] == "L"], [o for o in ops if o[0] == "R"]):
            yield (l, r)

    def apply_num(self, steps, x):
        for side, kind, f in steps:
            m = self.nums[f] if kind == "trmm" else np.linalg.inv(self.nums[f])
            x = m @ x if side == "L" else x @ m
        return x

    def undo_num(self, steps, x):
        for side, kind, f in reversed(steps):
            m = np.linalg.inv(self.nums[f]) if kind == "trmm" else self.nums[f]
            x = m @ x if side == "L" else x @ m
        return x

    def candidates(self, blk: Blk, cur: Val, goal: Val):
        """Steps (kind, side, alpha, factors) of every update of the forms whose numbers turn ``cur``
        into ``goal`` on the first instantiation, simplest first (fewest triangular steps and terms)."""
        prods = self.products(goal.num.shape, blk)
        keys = np.fromiter((p[0] for p in prods), float, len(prods))     # once for all the sums below
        for tr in self.transforms(goal.num.shape):
            for alpha in (1, -1):
                pre = alpha * self.undo_num(tr, goal.num) - cur.num
                for terms in self.sums(pre, prods, keys):
                    yield self.steps(terms, tr, alpha, pre=True)
                if not tr and alpha == -1:
                    continue
                post = goal.num - alpha * self.apply_num(tr, cur.num)
                for terms in self.sums(post, prods, keys):
                    yield self.steps(terms, tr, alpha, pre=False)

    def find(self, blk: Blk, cur: Val, goal: Val):
        """The first candidate that :func:`~flamefuse.derive.values.same` accepts, or None."""
        return next((steps for steps in self.candidates(blk, cur, goal) if self.proves(steps, cur, goal)), None)

    def steps(self, terms, tr, alpha, pre: bool):
        accs = [("acc", "", s, (p, q)) for _, s, p, q, _ in terms]
        # alpha is folded into the first triangular step (trsm/trmm scale by alpha)
        tris = [(kind, side, alpha if k == 0 else 1, (f,)) for k, (side, kind, f) in enumerate(tr)]
        if pre and tr:
            return [(k, sd, al, fs) for k, sd, al, fs in accs] + tris
        if not tr:
            return accs
        return tris + accs

    def result(self, steps, cur: Val) -> Val:
        """The value ``steps`` leave when the block holds ``cur`` (on every instantiation)."""
        x = cur
        for kind, side, alpha, facs in steps:
            fake = FineTask(kind, Blk("_", 0, 0), frozenset(), alpha, side,
                            a=_marker(facs[0]), b=_marker(facs[1]) if len(facs) > 1 else None)
            x = self.vals.apply(fake, x, read=lambda m: self._val(m.ref.ver))
        return x

    def proves(self, steps, cur: Val, goal: Val) -> bool:
        return same(self.result(steps, cur), goal)


def _shown(v: Val) -> str:
    """A value after the step, for a message: its SymPy form where there is one."""
    return "its value after it" if isinstance(v.sym, Tag) else f"{v.sym} (the value after it)"


def _marker(f) -> Fac:
    """A stand-in Fac carrying a pool factor (read back by ``Search.proves``)."""
    return Fac(Ref(Blk("_", 0, 0), f), "G")


def pool_of(*seqs) -> list[tuple]:
    """Every (block, kind, transposed) used as a factor in the sequences, and every off-diagonal block
    they write, both ways round."""
    seen = {}
    for t in itertools.chain(*seqs):
        if t.target.i is None or t.target.i != t.target.j:
            seen[(t.target, "G", False)] = seen[(t.target, "G", True)] = None
        for f in (t.a, t.b):
            if f is not None:
                seen[(f.ref.blk, f.kind, f.trans)] = None
                seen[(f.ref.blk, f.kind, not f.trans)] = None
    return list(seen)


def algebraic_update(before: list, after: list, start: dict, end: dict, force=()) -> list[FineTask]:
    """The update turning the before-state into the after-state, tasks unordered.

    Blocks whose before-version the after-version does not contain (and the
    blocks in ``force``) are derived by :class:`Search`; the others keep the
    after-state's tasks, re-pointed at the new versions of re-derived blocks.
    """
    vals = Values(symbolic=on("FLAMEFUSE_DERIVE_PROVE"), twins=len(TWINS))
    vals.run(before)
    vals.run(after)
    before_tasks = set(before)
    blocks = list(dict.fromkeys([t.target for t in after] + [t.target for t in before]))
    redo = [b for b in blocks if not start.get(b, frozenset()) <= end.get(b, frozenset()) or b in force]
    goal = {b: vals[Ref(b, end.get(b, frozenset()))] for b in blocks}
    search = Search(vals, lambda b, st: vals[Ref(b, start.get(b, frozenset()))] if st == BEFORE else goal[b],
                    pool_of(before, after))
    found = {}
    for b in redo:
        steps = search.find(b, vals[Ref(b, start.get(b, frozenset()))], goal[b])
        if steps is None:
            raise Unsupported(f"the algebra could not place {blk_name(b)}: no update of the forms "
                              f"alpha op(op(X + PQ)) + PQ turns its value before the step into "
                              f"{_shown(goal[b])}")
        found[b] = steps
    memo: dict = {}
    busy: set = set()

    def new_after(b: Blk) -> frozenset:
        if b in memo:
            return memo[b]
        if b in busy:
            raise Unsupported(f"the update of {blk_name(b)} reads its own new value through other blocks "
                              "(a temporary copy would be needed)")
        busy.add(b)
        if b in found:
            ver = start.get(b, frozenset())
            for kind, side, alpha, facs in found[b]:
                fs = [Fac(ref_of(blk, st), kind_, tr) for blk, st, kind_, tr in facs]
                base = inplace(ver) if kind == "acc" else ver
                t = FineTask(kind, b, base, alpha, side, a=fs[0], b=fs[1] if len(fs) > 1 else None)
                ver = ver | {t}
        else:
            ver = frozenset(task(t) for t in end.get(b, frozenset()))
        busy.discard(b)
        memo[b] = ver
        return ver

    def ref_of(blk: Blk, st: str) -> Ref:
        return Ref(blk, start.get(blk, frozenset()) if st == BEFORE else new_after(blk))

    def task(t: FineTask) -> FineTask:
        if t in before_tasks:
            return t
        base = frozenset(task(u) for u in t.base)
        return replace(t, base=base, a=fac(t.a), b=fac(t.b))

    def fac(f: Fac | None) -> Fac | None:
        if f is None:
            return None
        blk, ver = f.ref.blk, f.ref.ver
        if blk in found:
            if ver == end.get(blk, frozenset()):
                return Fac(Ref(blk, new_after(blk)), f.kind, f.trans)
            if ver == start.get(blk, frozenset()):
                return f
            raise Unsupported(f"{blk_name(blk)} is re-derived by algebra, but another update reads it at an "
                              "intermediate version")
        return Fac(Ref(blk, frozenset(task(u) for u in ver)), f.kind, f.trans)

    out = []
    for b in blocks:
        out += [t for t in new_after(b) if t not in start.get(b, frozenset())]
    return out


def check(before: list, after: list, start: dict, end: dict, update) -> None:
    """Run ``update`` (in order) on the numbers of the before-state; every block must reach its
    after-state value.  Raises Unsupported naming the first block that does not (numbers only:
    no SymPy)."""
    vals = Values(symbolic=False)
    vals.run(before)
    vals.run(after)
    blocks = set(start) | set(end) | {t.target for t in update}
    now = {b: vals[Ref(b, start.get(b, frozenset()))].num for b in blocks}
    for t in update:
        x = Val(None, now[t.target])
        read = (lambda f: _num_factor(vals, now, f))
        now[t.target] = _apply_num(vals, t, x, read)
    for b in blocks:
        goal = vals[Ref(b, end.get(b, frozenset()))].num
        if now[b].shape != goal.shape or not np.allclose(now[b], goal, rtol=1e-8, atol=1e-8):
            raise Unsupported(f"the derived update leaves {blk_name(b)} wrong (checked on random blocks); "
                              f"update: {'; '.join(render(t) for t in update)}")


def _num_factor(vals: Values, now: dict, f: Fac) -> Val:
    m = now.get(f.ref.blk)
    if m is None:
        m = vals[Ref(f.ref.blk, frozenset())].num
    if f.kind in ("UL", "UU"):
        m = np.tril(m, -1) + np.eye(len(m)) if f.kind == "UL" else np.triu(m)
    return Val(None, m.T if f.trans else m)


def _apply_num(vals: Values, t: FineTask, x: Val, read) -> np.ndarray:
    """Numbers only: the storage effect of one fine task (opaque kernels as in :mod:`.values`)."""
    a = read(t.a).num if t.a is not None else None
    if t.kind == "acc":
        return x.num + t.alpha * a @ read(t.b).num
    if t.kind == "copy":
        return t.alpha * a
    if t.kind in ("trsm", "trmm"):
        m = np.linalg.inv(a) if t.kind == "trsm" else a
        return t.alpha * (m @ x.num if t.side == "L" else x.num @ m)
    if t.kind == "trinv" and t.form in ("L", "U"):
        return np.linalg.inv(x.num)
    if t.kind == "trinv":
        tri = np.tril(x.num, -1) + np.eye(len(x.num)) if t.form == "UL" else np.triu(x.num)
        inv = np.linalg.inv(tri)
        return (np.triu(x.num) + np.tril(inv, -1)) if t.form == "UL" else (np.tril(x.num, -1) + np.triu(inv))
    if t.kind == "lauum":
        return x.num.T @ x.num
    if t.kind == "sylv":
        return sylvester(a, read(t.b).num, x.num)
    return np.tanh(x.num) + np.eye(*x.num.shape)
