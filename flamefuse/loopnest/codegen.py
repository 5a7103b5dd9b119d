"""Numba source for a scheduled loop-nest program.

:func:`generate` returns the text of a module with one ``@njit`` function
``kernel(<arrays in declaration order>, <sizes>, <scalars>)``.  Shape of the
code, per node of the :class:`~flamefuse.loopnest.fcg.Schedule`:

* a parallel outermost loop runs ``prange`` over one static block of
  iterations per thread; each privatised reduction location gets a
  per-thread copy filled with the operation's identity, combined into the
  array after the loop (never a ``prange`` reduction variable);
* an innermost loop keeps a reduction whose location does not move along it
  in a local variable (scalar replacement), hoists loads that do not move
  along it (from arrays it does not write) and 1-D row views of matrices,
  and, when several statements share it, is distributed: one loop per
  statement over the same row, which stays in L1/L2 between them, so each
  loop vectorises (legal because dependences only run from earlier to later
  statements).  Strip-mining the row was measured slower with Numba 0.68;
* a parallel outermost loop whose children are statements and innermost
  loops is *unrolled and jammed* by ``unroll`` (:data:`UNROLL`): each pass
  of an inner loop serves ``unroll`` consecutive outer iterations (a
  remainder loop, in the shape above, takes the last ``< unroll``).  Legal
  because a parallel loop carries no dependence except privatised,
  reorderable reductions, so its iterations may interleave at any level.
  The jammed inner loop is not distributed; scalar replacement there is per
  copy for a location that moves with the outer loop (``q[i]``), shared by
  the copies for one that does not (a grand total), and per inner iteration
  for a privatised location that moves along the inner loop only (``s[j]``
  of ``s = A^T r``: one load and one store serve all copies).  On one
  thread this makes BiCG about 1.7x faster, at the read bandwidth of the
  core (``docs/loopnest-performance.md``, columns *fused 1T* / *no jam 1T*);
* ``fastmath`` (reassociation, contraction) only when floating-point
  reordering is allowed.
"""
from __future__ import annotations

import numpy as np

from flamefuse.loopnest.fcg import Leaf, Loop, Schedule
from flamefuse.loopnest.ir import Access, Bin, Call, Const, Expr, Load, Scalar, Stored
from flamefuse.loopnest.nestcode import UNROLL, NestCode, Root, combine
from flamefuse.loopnest.parallel import Plan
from flamefuse.loopnest.reductions import Analysis, Reduction

FUNCS = {"abs": "abs", "sqrt": "np.sqrt", "exp": "np.exp", "log": "np.log", "sin": "np.sin",
         "cos": "np.cos", "tanh": "np.tanh"}


def identity(op: str, dtype: str) -> str:
    """The identity element of ``op`` for ``dtype`` as source text."""
    if dtype == "bool":
        return {"+": "False", "*": "True", "min": "True", "max": "False", "&": "True"}.get(op, "False")
    if dtype.startswith("int"):
        info = np.iinfo(dtype)
        return {"+": "0", "*": "1", "min": str(info.max), "max": str(info.min), "&": "-1"}.get(op, "0")
    return {"+": "0.0", "*": "1.0", "min": "np.inf", "max": "-np.inf"}[op]


class _Gen:
    def __init__(self, an: Analysis, opts: str, unroll: int = 1):
        self.an, self.p, self.opts, self.unroll = an, an.program, opts, unroll
        self.counter = 0
        self.lines: list[str] = []
        self.level_var: dict[int, dict[int, str]] = {}   # statement -> dim -> loop variable
        self.rename: dict[tuple[int, Access], str] = {}  # (statement, access) -> replacement array
        self.prefix: dict[tuple[int, Access], list[str]] = {}  # (statement, access) -> leading indices
        self.scalar_acc: dict[tuple[int, Access], str] = {}
        self.views: dict[tuple[int, Access], str] = {}

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    # -- expressions -------------------------------------------------------
    def sub(self, s: int, ix) -> str:
        if ix.dim is None:
            return str(ix.offset)
        v = self.level_var[s][ix.dim]
        t = v if ix.coef == 1 else f"{ix.coef} * {v}"
        return t if not ix.offset else f"{t} {'+' if ix.offset > 0 else '-'} {abs(ix.offset)}"

    def ref(self, s: int, acc: Access) -> str:
        key = (s, acc)
        if key in self.scalar_acc:
            return self.scalar_acc[key]
        if key in self.views:
            return f"{self.views[key]}[{self.sub(s, acc.index[-1])}]"
        subs = [self.sub(s, ix) for ix in acc.index] or ["0"]
        return f"{self.rename.get(key, acc.array)}[{', '.join(self.prefix.get(key, []) + subs)}]"

    def expr(self, s: int, e: Expr) -> str:
        if isinstance(e, Load):
            return self.ref(s, e.access)
        if isinstance(e, Const):
            return repr(e.value)
        if isinstance(e, Scalar):
            return e.name
        if isinstance(e, Stored):
            return f"_v{e.store}"
        if isinstance(e, Call):
            inner = self.expr(s, e.arg)
            return f"(-{inner})" if e.fn == "neg" else f"{FUNCS[e.fn]}({inner})"
        assert isinstance(e, Bin)
        return combine(e.op, self.expr(s, e.left), self.expr(s, e.right))

    def statement(self, depth: int, s: int) -> None:
        for k, store in enumerate(self.p.statements[s].stores):
            self.emit(depth, f"_v{k} = {self.expr(s, store.value)}")
            self.emit(depth, f"{self.ref(s, store.access)} = _v{k}")

    # -- loops -------------------------------------------------------------
    def node(self, depth: int, node, lo: str = "0", hi: str | None = None) -> None:
        if isinstance(node, Leaf):
            self.statement(depth, node.statement)
            return
        var = f"i{node.level}"
        for s, d in node.members:
            self.level_var.setdefault(s, {})[d] = var
        hi = hi or _bound(node.extent)
        if all(isinstance(c, Leaf) for c in node.body):
            self.innermost(depth, node, var, lo, hi)
            return
        self.emit(depth, f"for {var} in range({lo}, {hi}):")
        for child in node.body:
            self.node(depth + 1, child)

    def _reduction_accs(self, s):
        r = self.an.reductions[s]
        loc = r.location(self.p)
        return sorted({loc, r.load}, key=str), loc

    def hoist(self, depth: int, s: int, acc: Access, write: bool, written: set, d) -> bool:
        """Take one access of statement ``s`` out of the inner loop over dimension ``d``:
        a read that does not move with ``d`` becomes a scalar local (returns True), a
        matrix row a row view."""
        if not write and acc.array not in written and all(ix.dim != d for ix in acc.index):
            local = f"_h{self.fresh()}"
            self.emit(depth, f"{local} = {self.ref(s, acc)}")
            self.scalar_acc[(s, acc)] = local
            return True
        view = self._row_view(s, acc, d)
        if view:
            local = f"_r{self.fresh()}"
            self.emit(depth, f"{local} = {view}")
            self.views[(s, acc)] = local
        return False

    def innermost(self, depth: int, node: Loop, var: str, lo: str, hi: str) -> None:
        stmts = [c.statement for c in node.body]
        dim = dict(node.members)
        hoisted, invariant = [], []
        written = {st.access.array for s in stmts for st in self.p.statements[s].stores}
        for s in stmts:
            if isinstance(self.an.reductions[s], Reduction):
                accs, loc = self._reduction_accs(s)
                others = [t for t in stmts if t != s and any(
                    a.array == loc.array for a, _ in self.p.statements[t].accesses())]
                own = [a for a, _ in self.p.statements[s].accesses() if a.array == loc.array]
                if not others and set(own) == {loc} and all(ix.dim != dim[s] for ix in loc.index):
                    name = f"_a{s}"
                    self.emit(depth, f"{name} = {self.ref(s, loc)}")
                    hoisted.append((s, loc, name))
                    for a in accs:
                        self.scalar_acc[(s, a)] = name
            for acc, write in self.p.statements[s].accesses():
                key = (s, acc)
                if key not in self.scalar_acc and key not in self.views \
                        and self.hoist(depth, s, acc, write, written, dim[s]):
                    invariant.append(key)
        for s in stmts:
            self.emit(depth, f"for {var} in range({lo}, {hi}):")
            self.statement(depth + 1, s)
        for s, loc, name in hoisted:
            for a in self._reduction_accs(s)[0]:
                self.scalar_acc.pop((s, a), None)
            self.emit(depth, f"{self.ref(s, loc)} = {name}")
        for key in invariant:
            self.scalar_acc.pop(key, None)
        for s in stmts:
            for acc, _ in self.p.statements[s].accesses():
                self.views.pop((s, acc), None)

    # -- unroll-and-jam of a parallel outermost loop -------------------------
    def _use_copy(self, stmts, var: str, state) -> None:
        """Make copy ``state = (scalar_acc, views)`` current, the root loop at ``var``."""
        for s, d in stmts:
            self.level_var[s][d] = var
        self.scalar_acc, self.views = state

    def jammed(self, root: Loop) -> None:
        """Rows ``_lo.._hi`` of ``root`` in blocks of ``unroll`` copies, then the rest."""
        u_n, var = self.unroll, f"i{root.level}"
        members = root.members
        for s, d in members:
            self.level_var.setdefault(s, {})[d] = var
        names = [var] + [f"{var}_{u}" for u in range(1, u_n)]
        saved = (self.scalar_acc, self.views)
        states = [({}, {}) for _ in names]
        self.emit(1, f"_top = _lo + (_hi - _lo) // {u_n} * {u_n}")
        self.emit(1, f"for {var} in range(_lo, _top, {u_n}):")
        for u, name in enumerate(names[1:], 1):
            self.emit(2, f"{name} = {var} + {u}")
        for child in root.body:
            if isinstance(child, Leaf):
                for name, state in zip(names, states):
                    self._use_copy(members, name, state)
                    self.statement(2, child.statement)
            else:
                self.innermost_jammed(2, child, members, names, states)
        self._use_copy(members, var, saved)
        self.emit(1, f"for {var} in range(_top, _hi):")
        for child in root.body:
            self.node(2, child)

    def innermost_jammed(self, depth: int, node: Loop, members, names, states) -> None:
        """One loop over the row for all copies of all statements (no distribution).

        Scalar replacement per reduction ``s`` whose array no other statement
        touches: a location fixed along this loop lives in a local before it
        (one per copy when it moves with the root loop, one shared otherwise);
        a location that moves along this loop but not with the root loop
        (a privatised reduction) is loaded once per iteration into a local,
        updated by every copy in turn, stored once."""
        var = f"i{node.level}"
        stmts = [c.statement for c in node.body]
        dim, outer = dict(node.members), dict(members)
        for s, d in node.members:
            self.level_var.setdefault(s, {})[d] = var
        written = {st.access.array for s in stmts for st in self.p.statements[s].stores}
        hoisted, combined = [], []      # (s, loc, local, copy), (s, loc, local)
        for s in stmts:
            r = self.an.reductions[s]
            if not isinstance(r, Reduction):
                continue
            loc = r.location(self.p)
            others = [t for t in stmts if t != s and any(
                a.array == loc.array for a, _ in self.p.statements[t].accesses())]
            own = {a for a, _ in self.p.statements[s].accesses() if a.array == loc.array}
            if others or own != {loc}:
                continue
            moves = any(ix.dim == dim[s] for ix in loc.index)
            per_copy = any(ix.dim == outer[s] for ix in loc.index)
            if not moves:
                for u, (name, state) in enumerate(zip(names, states)):
                    if u and not per_copy:
                        state[0][(s, loc)] = f"_a{s}"
                        continue
                    self._use_copy(members, name, state)
                    local = f"_a{s}_{u}" if per_copy else f"_a{s}"
                    self.emit(depth, f"{local} = {self.ref(s, loc)}")
                    hoisted.append((s, loc, local, u))
                    state[0][(s, loc)] = local
            elif not per_copy:
                combined.append((s, loc, f"_c{s}"))
        shared = {(s, loc) for s, loc, _ in combined}
        for u, (name, state) in enumerate(zip(names, states)):
            self._use_copy(members, name, state)
            for s in stmts:
                for acc, write in self.p.statements[s].accesses():
                    key = (s, acc)
                    if key in self.scalar_acc or key in self.views or (u and key in shared):
                        continue
                    self.hoist(depth, s, acc, write, written, dim[s])
        self.emit(depth, f"for {var} in range(0, {_bound(node.extent)}):")
        self._use_copy(members, names[0], states[0])
        for s, loc, local in combined:
            self.emit(depth + 1, f"{local} = {self.ref(s, loc)}")
        for s, loc, local in combined:
            for state in states:
                state[0][(s, loc)] = local
        for s in stmts:
            for name, state in zip(names, states):
                self._use_copy(members, name, state)
                self.statement(depth + 1, s)
        self._use_copy(members, names[0], states[0])
        for s, loc, local in combined:
            for state in states:
                state[0].pop((s, loc))
            self.emit(depth + 1, f"{self.ref(s, loc)} = {local}")
        for s, loc, local, u in hoisted:
            self._use_copy(members, names[u], states[u])
            self.scalar_acc.pop((s, loc))
            self.emit(depth, f"{self.ref(s, loc)} = {local}")
        for state in states:
            state[0].clear()
            state[1].clear()

    def fresh(self) -> int:
        self.counter += 1
        return self.counter

    def _row_view(self, s: int, acc: Access, d: int) -> str | None:
        """``A[i]`` for an access ``A[i, j]`` whose last subscript is the loop index
        ``d`` itself and whose others do not move along it (None otherwise)."""
        key = (s, acc)
        if len(acc.index) + len(self.prefix.get(key, [])) < 2:
            return None
        last = acc.index[-1]
        if last.dim != d or last.coef != 1 or any(ix.dim == d for ix in acc.index[:-1]):
            return None
        subs = self.prefix.get(key, []) + [self.sub(s, ix) for ix in acc.index[:-1]]
        return f"{self.rename.get(key, acc.array)}[{', '.join(subs)}]"

    def root(self, k: int, node, plan: Plan | None) -> Root:
        """Top-level node ``k`` as a :class:`Root`: its block function's body and how the
        kernel calls it."""
        self.lines = []
        privs = []
        for s in (plan.private if plan and plan.parallel else ()):
            accs, loc = self._reduction_accs(s)
            for a in accs:
                self.rename[(s, a)] = f"_p_{loc.array}"
                self.prefix[(s, a)] = ["_t"]
            op, dtype = self.an.reductions[s].op, self.p.array(loc.array).dtype
            privs.append((loc.array, op, dtype, identity(op, dtype)))
        if isinstance(node, Leaf):
            self.node(1, node)
        elif plan and plan.parallel and self.unroll > 1 and jammable(node):
            self.jammed(node)
        else:
            self.node(1, node, "_lo", "_hi")
        ext = "1" if isinstance(node, Leaf) else _bound(node.extent)
        return Root(k, bool(plan and plan.parallel and not isinstance(node, Leaf)), ext,
                    tuple(privs), tuple(self.lines))


def jammable(node) -> bool:
    """A two-deep nest: children are statements or innermost loops, at least one loop."""
    loops = [c for c in node.body if isinstance(c, Loop)]
    return bool(loops) and all(isinstance(g, Leaf) for c in loops for g in c.body)


def _bound(b) -> str:
    if not b.param:
        return str(b.const)
    return b.param if not b.const else f"({b.param} {'+' if b.const > 0 else '-'} {abs(b.const)})"


def signature(an: Analysis) -> tuple[str, ...]:
    p = an.program
    return tuple(a.name for a in p.arrays) + p.params() + p.scalars


def nest_code(an: Analysis, sched: Schedule, plans: dict[int, Plan], unroll: int = UNROLL) -> NestCode:
    """The kernel as a value (:class:`flamefuse.loopnest.nestcode.NestCode`); ``plans`` maps the
    index of a top-level Loop to its Plan; ``unroll`` is the unroll-and-jam factor of parallel
    two-deep nests (1: none).

    Each top-level node becomes a sequential ``_block<k>(..., _t, _lo, _hi)``
    function (Numba vectorises loops there, not inside a ``prange`` body);
    ``kernel`` calls the blocks in order, a parallel one once per thread."""
    g = _Gen(an, "", unroll)
    roots = tuple(g.root(k, node, plans.get(k)) for k, node in enumerate(sched.roots))
    return NestCode(tuple(s.name for s in an.program.statements), signature(an),
                    an.reorder_float, any(pl.parallel for pl in plans.values()), roots)


def generate(an: Analysis, sched: Schedule, plans: dict[int, Plan], unroll: int = UNROLL) -> str:
    """The Numba module's source of :func:`nest_code`'s value."""
    return nest_code(an, sched, plans, unroll).source
