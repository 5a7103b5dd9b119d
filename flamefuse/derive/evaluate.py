"""Refine 2x2 tasks into fine block tasks on a 3x3 grid.

``Evaluator(layout, cur, seq)`` runs tasks in order: each task's expression
is computed *into the storage of its output region*, block by block, and
every block operation is appended to ``seq`` as a :class:`FineTask` while
``cur`` (block -> version) follows it.  Rules (loop-derivation.md §3):

* an expression that is one of the library's own operations applied to one
  region (``chol(X)``, ``inv(X)``, ``X' * X``, ``lu(X)``, ...) becomes a leaf
  kernel on a single block, or on a 2x2 sub-grid the library operation's own
  exact PME (recursion);
* ``L \\ X``, ``X / L``, ``L * X`` with a triangular block matrix L become block
  substitution / in-place block products, split along the triangular
  dimension and block-wise along the free one;
* ``X + Y * Z`` / ``X - Y * Z`` become one accumulation task per block term;
* a product with a state computed as ``inv(Z)`` may be read as a solve with
  ``Z`` (``X * inv(Z) = X / Z``), so the diagonal block is solved with before
  it is inverted (option ``inverse_solve``);
* ``any(...)`` reads the most recently computed option, else the initial one of a
  region that the earlier operations have finished (``stale`` lists the regions an
  earlier operation of the fused loop still has future tasks on: their storage does
  not hold this operation's input yet, so an ``any`` cannot read them; the search's
  rules 1 and 6 may each be met by a different option of one ``any``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from flamefuse.derive.blocks import Blk, Fac, FineTask, Mat, Place, Ref, diag_kind, inplace, wrap
from flamefuse.pme.model import AnyOf, Fn, Num, State, inputs
from flamefuse.pme.terms import show
from flamefuse.spec.expr import parse_task
from flamefuse.spec.library import LIBRARY

# the kernel one diagonal block gets for each library operation that works on one storage
LEAF = {"chol": ("chol", ""), "trinv": ("trinv", "L"), "trinv_unit": ("trinv", "UL"),
        "triuinv": ("trinv", "UU"), "ltl": ("lauum", ""), "lu": ("lu", "P"), "lu_nopiv": ("lu", ""),
        "ul": ("ul", "")}


@dataclass(frozen=True)
class Options:
    """Choices the rules leave open; derivation tries them in order (loop.OPTIONS).

    ``any_backward``: tasks reading each other through ``any(...)`` run in
    reverse input order; ``distribute``: a block solve is distributed over the
    sum, ``L_kk^{-1}(B_k - L_kj X_j) = L_kk^{-1} B_k - (L_kk^{-1} L_kj) X_j``;
    ``inverse_solve``: a product with an inverted region is a solve with the
    region itself.  An evaluation reads an option only where a rule meets its
    choice (:meth:`Evaluator.option` notes which): options it never read did not
    change what it made.
    """
    any_backward: bool = False
    distribute: bool = False
    inverse_solve: bool = False


class Unsupported(Exception):
    """The derivation rules do not cover this task; the message says why."""


def skeleton(e):
    if isinstance(e, (State, AnyOf)):
        return "X"
    if isinstance(e, Fn):
        return (e.name,) + tuple(skeleton(a) for a in e.args)
    return e.value if isinstance(e, Num) else str(e)


def _regions_in(e) -> set[str]:
    if isinstance(e, State):
        return {e.region}
    if isinstance(e, AnyOf):
        return {s.region for s in e.options}
    if isinstance(e, Fn):
        return set().union(*(_regions_in(a) for a in e.args))
    return set()


@lru_cache(maxsize=None)
def self_ops() -> dict:
    """skeleton of the whole operation -> (library name, its tasks, output formals).

    Tasks are over regions ``self<formal>_<part>`` (``selfl_tl``); formals with a
    default (``R`` of trinv) are outputs, bound to the output storage, the
    others to the input's storage.
    """
    out = {}
    for name, op in LIBRARY.items():
        required = [f for f, spec in op.formals.items() if spec.default is None]
        if op.search_only or len(required) != 1 or name not in LEAF:
            continue
        regions = {f"{formal}_{p}": f"self{formal.lower()}_{p.lower()}" for formal in op.formals
                   for p in ("TL", "TR", "BL", "BR")}
        tasks = tuple(parse_task(t, regions) for t in op.tasks)
        whole = next(t for t in tasks if t.kind == "op_eq" and t.out.region.endswith("_tl"))
        outputs = tuple(f for f, spec in op.formals.items() if spec.default is not None)
        out[skeleton(whole.expr)] = (name, tasks, tuple(op.formals), outputs)
    return out


class Evaluator:
    def __init__(self, layout: dict[str, Place], cur: dict, seq: list, opts: Options = Options(),
                 stale: frozenset = frozenset(), read: set | None = None):
        self.layout, self.cur, self.seq, self.opts, self.stale = layout, cur, seq, opts, stale
        self.read = set() if read is None else read     # the names of the options read so far
        self.hat = {b: cur.get(b, frozenset()) for p in layout.values() for b in p.blocks()}
        self.states: dict[State, Mat] = {}
        self.defs: dict[State, object] = {}
        self.order: list[State] = []

    def option(self, name: str) -> bool:
        """The option ``name`` (of :class:`Options`), noted as read."""
        self.read.add(name)
        return getattr(self.opts, name)

    # ---- values
    def now(self, blk: Blk) -> Ref:
        return Ref(blk, self.cur.get(blk, frozenset()))

    def mat(self, place: Place, ref) -> Mat:
        return Mat(place.rows, place.cols, tuple(
            ((b.i, b.j), Fac(ref(b), diag_kind(place.structure, b.i, b.j))) for b in place.blocks()))

    def state(self, s: State) -> Mat:
        if s.kind == "hat":
            return self.mat(self.layout[s.region], lambda b: Ref(b, self.hat[b]))
        if s not in self.states:
            raise Unsupported(f"{show(s)} is read but not computed")
        return self.states[s]

    def resolve(self, e):
        if isinstance(e, Fn) and e.name == "all":     # every option applied to one storage: the latest
            if not all(s in self.states for s in e.args):
                raise Unsupported(f"{show(e)} reads a state that is not computed")
            return max(e.args, key=self.order.index)
        if not isinstance(e, AnyOf):
            return e
        done = [s for s in e.options if s in self.states]
        if done:
            return max(done, key=self.order.index)
        hats = [s for s in e.options if s.kind == "hat" and s.region not in self.stale]
        if not hats:
            late = [s.region for s in e.options if s.kind == "hat" and s.region in self.stale]
            raise Unsupported(f"no option of {show(e)} is computed" + (
                f" ({', '.join(late)} still waits for an earlier operation's future tasks)" if late else ""))
        return hats[0]

    def value(self, e) -> Mat:
        e = self.resolve(e)
        if isinstance(e, State):
            return self.state(e)
        if isinstance(e, Fn) and len(e.args) == 1 and e.name in ("tr", "unit_lower", "upper"):
            m = self.value(e.args[0])
            return m.T() if e.name == "tr" else wrap(m, "UL" if e.name == "unit_lower" else "UU")
        raise Unsupported(f"{show(e)} is not a block of a region")

    # ---- tasks
    def run(self, tasks) -> None:
        tasks = list(tasks)
        if self.option("any_backward"):   # tasks that read any(...) of each other: the later one first
            slots = [k for k, t in enumerate(tasks) if any(isinstance(i, AnyOf) for i in inputs(t))]
            for k, t in zip(slots, [tasks[k] for k in reversed(slots)]):
                tasks[k] = t
        for t in tasks:
            self.task(t)

    def task(self, t) -> None:
        if t.kind == "const":
            return
        place = self.layout[t.out.region]
        if t.kind != "comes_from":
            self.into(place, t.expr, 1)
        self.states[t.out] = self.mat(place, self.now)
        self.defs[t.out] = t.expr
        self.order.append(t.out)

    def emit(self, t: FineTask) -> None:
        a, b = _canon(t.a), _canon(t.b)
        if a is not t.a or b is not t.b:          # (``replace`` costs more than the rest of emit)
            t = replace(t, a=a, b=b)
        ver = self.cur.get(t.target, frozenset())
        if t in ver:
            raise Unsupported("a block would get the same term twice")
        self.seq.append(t)
        self.cur[t.target] = ver | {t}

    def into(self, place: Place, e, alpha: int) -> None:
        """Compute ``alpha * e`` into the storage of ``place``."""
        e = self.resolve(e)
        if isinstance(e, Fn) and e.name == "neg":
            return self.into(place, e.args[0], -alpha)
        if isinstance(e, Fn) and e.name in ("add", "sub"):
            self.into(place, e.args[0], alpha)
            return self.acc(place, e.args[1], alpha if e.name == "add" else -alpha)
        whole = self_ops().get(skeleton(e))
        if whole and len(_regions_in(e)) == 1:
            if alpha != 1:
                raise Unsupported(f"a scaled {whole[0]}")
            return self.self_op(place, self.resolve(_first_state(e)), *whole)
        if isinstance(e, Fn) and e.name == "sylv":
            if alpha != 1:
                raise Unsupported("a scaled Sylvester solve")
            a, b = self.value(e.args[0]), self.value(e.args[1])
            self.into(place, e.args[2], 1)
            return self.sylv(place, a, b)
        if isinstance(e, Fn) and e.name in ("lsolve", "rsolve"):
            tri, other, side = (e.args[0], e.args[1], "L") if e.name == "lsolve" else (e.args[1], e.args[0], "R")
            self.into(place, other, 1)
            return self.tri(place, self.value(tri), side, alpha, "trsm")
        if isinstance(e, Fn) and e.name == "mul":
            shape = (place.rows, place.cols)
            solve = self.as_solve(e, shape)
            if solve is not None:
                return self.into(place, solve, alpha)
            x, y = self.value(e.args[0]), self.value(e.args[1])
            if y.triangular() and (x.rows, x.cols) == shape:
                self.into(place, e.args[0], 1)
                return self.tri(place, y, "R", alpha, "trmm")
            if x.triangular() and (y.rows, y.cols) == shape:
                self.into(place, e.args[1], 1)
                return self.tri(place, x, "L", alpha, "trmm")
            raise Unsupported(f"product {show(e)} has no triangular factor to apply in place")
        if isinstance(e, State):
            src = self.value(e)
            for b in place.blocks():
                f = src.get(b.i, b.j)
                if f is None:
                    raise Unsupported(f"{show(e)} does not cover the output region")
                if f.ref != self.now(b) or f.trans or alpha != 1:
                    self.emit(FineTask("copy", b, self.now(b).ver, alpha, a=f))
            return None
        raise Unsupported(f"no rule for {show(e)}")

    def inverted(self, f):
        """``Z`` when the factor ``f`` is a computed ``inv(Z)`` (also under ``unit_lower``/``upper``)."""
        f = self.resolve(f)
        wrap_name = f.name if isinstance(f, Fn) and f.name in ("unit_lower", "upper") else None
        s = self.resolve(f.args[0]) if wrap_name else f
        d = self.defs.get(s) if isinstance(s, State) else None
        if not (isinstance(d, Fn) and d.name == "inv"):
            return None
        z = d.args[0]
        if wrap_name and not (isinstance(z, Fn) and z.name == wrap_name):
            return None
        return z

    def as_solve(self, e: Fn, shape):
        """``X * inv(Z)`` as ``X / Z`` and ``inv(Z) * X`` as ``Z \\ X`` (option ``inverse_solve``)."""
        if not self.option("inverse_solve"):
            return None
        for k, name in ((1, "rsolve"), (0, "lsolve")):
            z = self.inverted(e.args[k])
            other = e.args[1 - k]
            if z is not None:
                v = self.value(other)
                if (v.rows, v.cols) == shape:
                    return Fn(name, (other, z) if name == "rsolve" else (z, other))
        return None

    def acc(self, place: Place, e, coef: int) -> None:
        e = self.resolve(e)
        if isinstance(e, Fn) and e.name == "neg":
            return self.acc(place, e.args[0], -coef)
        if not (isinstance(e, Fn) and e.name == "mul"):
            raise Unsupported(f"cannot add {show(e)}: only products are accumulated")
        x, y = self.value(e.args[0]), self.value(e.args[1])
        if x.cols != y.rows:
            raise Unsupported(f"{show(e)}: block dimensions do not match")
        for b in place.blocks():
            for k in x.cols:
                fa, fb = x.get(b.i, k), y.get(k, b.j)
                if fa is not None and fb is not None:
                    self.add_term(b, coef, fa, fb)
        return None

    def add_term(self, b: Blk, coef: int, fa: Fac, fb: Fac) -> None:
        self.emit(FineTask("acc", b, inplace(self.now(b).ver), coef, a=fa, b=fb))

    def tri(self, place: Place, m: Mat, side: str, alpha: int, kind: str) -> None:
        """In place: X := alpha m^{-1} X / X m^{-1} (trsm) or alpha m X / X m (trmm), by blocks."""
        if not m.triangular():
            raise Unsupported("a solve or in-place product needs a triangular factor")
        K = m.rows
        if (place.rows if side == "L" else place.cols) != K:
            raise Unsupported("triangular factor does not match the region it is applied to")
        low = m.lower()
        present = set(place.blocks())
        for other in (place.cols if side == "L" else place.rows):
            tgt = {k: (Blk(place.operand, k, other) if side == "L" else Blk(place.operand, other, k)) for k in K}
            if not all(t in present for t in tgt.values()):
                raise Unsupported("in-place triangular operation on a partly stored region")
            old = {k: self.now(tgt[k]) for k in K}
            coef = lambda k, j: m.get(k, j) if side == "L" else m.get(j, k)
            term = (lambda k, j, x: (coef(k, j), x)) if side == "L" else (lambda k, j, x: (x, coef(k, j)))
            if kind == "trsm":   # substitution: solved blocks first
                order = list(K) if low == (side == "L") else list(reversed(K))
                for idx, k in enumerate(order):
                    if self.option("distribute") and idx:
                        self.distributed_solve(tgt, k, order[:idx], m, side, alpha)
                        continue
                    for j in order[:idx]:
                        if coef(k, j) is not None:
                            fa, fb = term(k, j, Fac(self.now(tgt[j]), "G"))
                            self.add_term(tgt[k], -alpha, fa, fb)
                    self.emit(FineTask("trsm", tgt[k], self.now(tgt[k]).ver, alpha, side, a=m.get(k, k)))
            else:                # product: overwrite a block only after its old value was used
                order = list(reversed(K)) if low == (side == "L") else list(K)
                for k in order:
                    self.emit(FineTask("trmm", tgt[k], self.now(tgt[k]).ver, alpha, side, a=m.get(k, k)))
                    for j in K:
                        if j != k and coef(k, j) is not None:
                            fa, fb = term(k, j, Fac(old[j], "G"))
                            self.add_term(tgt[k], alpha, fa, fb)

    def sylv(self, place: Place, a: Mat, b: Mat) -> None:
        """X := sylv(a, b, X) (a X + X b = X's value) by blocks: block (i, j) once the blocks it
        couples to are solved (rows from the bottom for an upper a, columns from the left for an
        upper b), ``X_ij -= a_ik X_kj`` and ``X_ij -= X_il b_lj`` for those, then its own solve."""
        if not (a.triangular() and b.triangular()) or a.rows != place.rows or b.cols != place.cols:
            raise Unsupported("a Sylvester solve needs triangular factors on the region's rows and columns")
        rows = list(place.rows) if a.lower() else list(reversed(place.rows))
        cols = list(reversed(place.cols)) if b.lower() else list(place.cols)
        for x, i in enumerate(rows):
            for y, j in enumerate(cols):
                tgt = Blk(place.operand, i, j)
                for k in rows[:x]:
                    if a.get(i, k) is not None:
                        self.add_term(tgt, -1, a.get(i, k), Fac(self.now(Blk(place.operand, k, j)), "G"))
                for m in cols[:y]:
                    if b.get(m, j) is not None:
                        self.add_term(tgt, -1, Fac(self.now(Blk(place.operand, i, m)), "G"), b.get(m, j))
                self.emit(FineTask("sylv", tgt, self.now(tgt).ver, a=a.get(i, i), b=b.get(j, j)))

    def distributed_solve(self, tgt: dict, k, solved, m: Mat, side: str, alpha: int) -> None:
        """X_k = alpha L_kk^{-1} B_k - sum_j (L_kk^{-1} L_kj) X_j (side L; mirrored for R).

        The factor L_kk^{-1} L_kj is the value block L_kj has after an in-place
        solve with L_kk: a version some grouping may hold, named exactly as that
        solve would name it (scheduling rejects it when no state has it).
        """
        diag = m.get(k, k)
        self.emit(FineTask("trsm", tgt[k], self.now(tgt[k]).ver, alpha, side, a=diag))
        for j in solved:
            off = m.get(k, j) if side == "L" else m.get(j, k)
            if off is None:
                continue
            if off.trans or off.kind != "G":
                raise Unsupported("a distributed solve needs an untransposed off-diagonal block")
            solve = self.prior_solve(off.ref, diag, side)
            scaled = Fac(Ref(off.ref.blk, off.ref.ver | {solve}), "G")
            x = Fac(self.now(tgt[j]), "G")
            self.add_term(tgt[k], -solve.alpha, *((scaled, x) if side == "L" else (x, scaled)))

    def prior_solve(self, off: Ref, diag: Fac, side: str) -> FineTask:
        """The solve of ``off`` with ``diag`` already applied to its block (any sign), else a new one."""
        new = FineTask("trsm", off.blk, off.ver, 1, side, a=_canon(diag))
        for t in self.cur.get(off.blk, frozenset()):
            if t.kind == "trsm" and t.base == off.ver and (t.side, t.a) == (side, new.a):
                return t
        return new

    def self_op(self, place: Place, source: State, name: str, tasks, formals, outputs) -> None:
        """``name`` of the region ``source`` into ``place``: a leaf kernel or the op's own PME."""
        src = self.layout[source.region]
        if len(place.rows) == 1 and len(place.cols) == 1:
            self.into(place, source, 1)
            kind, form = LEAF[name]
            b = place.blocks()[0]
            return self.emit(FineTask(kind, b, self.now(b).ver, form=form))
        if place.rows != place.cols or len(place.rows) != 2 or (src.rows, src.cols) != (place.rows, place.cols):
            raise Unsupported(f"{name} of a region that is not a 2x2 grid of blocks")
        if not outputs:
            self.into(place, source, 1)
        r0, r1 = place.rows
        sub = {}
        for formal in formals:
            p = place if formal in outputs or not outputs else src
            for part, r, c in (("tl", r0, r0), ("tr", r0, r1), ("bl", r1, r0), ("br", r1, r1)):
                sub[f"self{formal.lower()}_{part}"] = Place(p.operand, (r,), (c,), p.structure)
        Evaluator(sub, self.cur, self.seq, self.opts, read=self.read).run(tasks)
        return None


def _canon(f: Fac | None) -> Fac | None:
    """A block read right after a plain copy is read from the copy's source (same value)."""
    if f is not None and len(f.ref.ver) == 1:
        (t,) = f.ref.ver
        if t.kind == "copy" and t.alpha == 1 and not t.a.trans:
            return Fac(t.a.ref, f.kind, f.trans)
    return f


def _first_state(e):
    if isinstance(e, (State, AnyOf)):
        return e
    for a in e.args:
        s = _first_state(a)
        if s is not None:
            return s
    return None
