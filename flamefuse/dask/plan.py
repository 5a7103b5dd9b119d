"""A derived loop as tile tasks: the kernel IR's body statements expanded over a grid of tiles.

``plan(kernel, tiles) -> Plan`` runs the loop of a :class:`flamefuse.codegen.ir.Kernel`
symbolically over ``tiles`` diagonal tiles (the chunks of a Dask array, the
chunk being the block size): at iteration k the 3x3 repartition's index 0 is
the tiles before k, 1 the tile k, 2 the tiles after it (TL->BR runs k upwards,
BR->TL downwards).  Each body statement becomes one :class:`TileTask` per
target tile it writes (inside the stored triangle of a lower, upper or
symmetric operand): the statement restricted to that tile, as a short list of
tile steps, each again an IR :class:`~flamefuse.codegen.ir.Stmt` whose spans
are whole tiles (``Span(str(k), None, None)`` names the task's input k; the
target is ``W``, the task's working copy of the tile):

* potrf / trtri / lauum / lu / ul on a diagonal tile: that one step;
* gemm, syrk, triacc: a sum over the inner tiles (a syrk target's diagonal
  tiles take syrk steps, the others gemm steps);
* trsm with a triangle of several tiles: block substitution, each tile solved
  with the diagonal tile after the products with the tiles solved before it
  (which are inputs: the dependences are the data flow);
* trmm with a triangle of several tiles: the diagonal tile's trmm, then the
  products with the other tiles' previous versions;
* copy: per tile, transposing the source tile where the statement does.

Tiles are versions: every task writes a new version of its target tile and
reads the versions current when the statement starts (trmm, whose other
products read old values) or as they are written (trsm's substitution), so
the dependences of the task graph are exactly the loop body's data flow, and
no anti-dependence is left.  ``Plan.tasks`` in program order;
``Plan.final`` maps every (operand, row, column) tile to its last version.
A version is ``("in", operand, r, c)`` (the input tile) or ``("t", index)``
(the output of task ``index``).  ``Plan.critical_path()`` counts the tasks on the longest
chain.  ``contract(plan)`` merges each tile's chain of updates whose intermediate
versions nothing else reads into one task (what :func:`flamefuse.dask.kernel` uses
by default).  ``Unsupported`` (from :mod:`flamefuse.derive.evaluate`)
for a statement the tiles cannot express (a pivoted panel, a finish step).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from flamefuse.codegen.ir import Kernel, Span, Stmt
from flamefuse.derive.evaluate import Unsupported

Tile = tuple  # (operand, row tile, column tile)
W = Span("W", None, None)
SINGLE = ("potrf", "trtri", "lauum", "lu", "ul")


@dataclass(frozen=True)
class TileTask:
    target: Tile              # (operand, r, c) written
    source: tuple             # the version of the target read first (a working copy of it is W)
    inputs: tuple             # versions read by the steps, Span("k") = inputs[k]
    steps: tuple              # IR Stmts on whole tiles
    text: str                 # the loop-body statement it comes from, and the iteration
    iteration: int


@dataclass(frozen=True)
class Plan:
    kernel: str
    tiles: int
    tasks: tuple
    final: dict = field(hash=False)

    def critical_path(self, weight=None) -> float:
        """The longest chain of dependent tasks (``weight(task)`` each; 1 by default)."""
        weight = weight or (lambda t: 1.0)
        depth = []
        for t in self.tasks:
            before = [depth[v[1]] for v in (t.source,) + t.inputs if v[0] == "t"]
            depth.append(max(before, default=0.0) + weight(t))
        return max(depth, default=0.0)


def _ranges(k: int, n: int) -> tuple:
    return (tuple(range(0, k)), (k,), tuple(range(k + 1, n)))


class _Builder:
    def __init__(self, kernel: Kernel, tiles: int, shape: dict):
        self.ops = {o.name: o for o in kernel.operands}
        self.n, self.shape = tiles, shape        # shape: operand -> (row tiles, column tiles)
        self.state: dict = {}
        self.tasks: list = []
        self.k = 0

    def current(self, tile: Tile):
        return self.state.get(tile, ("in",) + tuple(tile))

    # ---- spans to tile indices ----
    def rows(self, s: Span, rng) -> tuple:
        return rng[s.i] if s.i is not None else tuple(range(self.shape[s.operand][0]))

    def colsof(self, s: Span, rng) -> tuple:
        return rng[s.j] if s.j is not None else tuple(range(self.shape[s.operand][1]))

    def stored(self, name: str, r: int, c: int) -> bool:
        st = self.ops[name].structure
        return not ((st in ("lower", "symmetric") and r < c) or (st == "upper" and r > c))

    def emit(self, target: Tile, inputs: list, steps: list, st: Stmt, k: int, snapshot=None):
        def ver(t):
            return self.current(t) if snapshot is None else snapshot.get(t, ("in",) + tuple(t))
        task = TileTask(target, ver(target), tuple(ver(t) for t in inputs), tuple(steps), st.text, k)
        self.tasks.append(task)
        return task

    # ---- statements ----
    def stmt(self, st: Stmt, k: int) -> None:
        rng = _ranges(k, self.n)
        t = st.target
        trows, tcols = self.rows(t, rng), self.colsof(t, rng)
        if not trows or not tcols:
            return
        if st.op in SINGLE:
            if len(trows) != 1 or trows != tcols:
                raise Unsupported(f"{st.text}: {st.op} of more than one tile")
            self.write([(t.operand, trows[0], tcols[0]), [], [Stmt(st.op, W, uplo=st.uplo, diag=st.diag,
                                                                      text=st.text)]], st, k)
            return
        if st.op in ("getrf", "colperm"):
            raise Unsupported(f"{st.text}: pivoting across tiles is not expressed as tile tasks")
        handler = {"gemm": self.gemm, "syrk": self.syrk, "trsm": self.trsm, "trmm": self.trmm,
                   "triacc": self.triacc, "copy": self.copy}.get(st.op)
        if handler is None:
            raise Unsupported(f"{st.text}: no tile form of {st.op}")
        handler(st, rng, trows, tcols)

    def write(self, item, st, k, snapshot=None):
        target, inputs, steps = item
        task = self.emit(target, inputs, steps, st, k, snapshot)
        self.state[target] = ("t", len(self.tasks) - 1)
        return task

    def _targets(self, st: Stmt, trows, tcols):
        name = st.target.operand
        return [(x, y) for x in range(len(trows)) for y in range(len(tcols))
                if self.stored(name, trows[x], tcols[y])]

    def _op_tile(self, s: Span, rng, x: int, p: int, trans: str) -> Tile:
        """The tile (x, p) of op(s) (s transposed when trans is T): the stored tile and nothing else."""
        r, c = self.rows(s, rng), self.colsof(s, rng)
        return (s.operand, r[x], c[p]) if trans == "N" else (s.operand, r[p], c[x])

    def gemm(self, st: Stmt, rng, trows, tcols):
        a, b = st.a, st.b
        inner = len(self.colsof(a, rng)) if st.trans == "N" else len(self.rows(a, rng))
        for x, y in self._targets(st, trows, tcols):
            ins, steps = [], []
            for p in range(inner):
                ins += [self._op_tile(a, rng, x, p, st.trans), self._op_tile(b, rng, p, y, st.trans_b)]
                steps.append(Stmt("gemm", W, st.alpha, trans=st.trans, trans_b=st.trans_b,
                                  a=Span(str(len(ins) - 2), None, None), b=Span(str(len(ins) - 1), None, None)))
            if steps:
                self.write([(st.target.operand, trows[x], tcols[y]), ins, steps], st, self.k)

    def syrk(self, st: Stmt, rng, trows, tcols):
        a = st.a
        inner = len(self.colsof(a, rng)) if st.trans == "N" else len(self.rows(a, rng))
        back = "T" if st.trans == "N" else "N"
        for x, y in self._targets(st, trows, tcols):
            ins, steps = [], []
            for p in range(inner):
                if x == y:
                    ins.append(self._op_tile(a, rng, x, p, st.trans))
                    steps.append(Stmt("syrk", W, st.alpha, uplo=st.uplo, trans=st.trans, a=Span(str(len(ins) - 1), None, None)))
                else:
                    ins += [self._op_tile(a, rng, x, p, st.trans), self._op_tile(a, rng, y, p, st.trans)]
                    steps.append(Stmt("gemm", W, st.alpha, trans=st.trans, trans_b=back,
                                      a=Span(str(len(ins) - 2), None, None), b=Span(str(len(ins) - 1), None, None)))
            if steps:
                self.write([(st.target.operand, trows[x], tcols[y]), ins, steps], st, self.k)

    def _tri(self, st: Stmt, rng):
        """(tile indices of the triangle, nonzero(p, q) of op(T), the stored tile of op(T)[p, q], op flag)."""
        tri = self.rows(st.a, rng)
        lower = st.uplo == "L"

        def nonzero(p, q):
            if p == q:
                return True
            return (p > q) == lower if st.trans == "N" else (q > p) == lower

        def tile(p, q):
            return (st.a.operand, tri[p], tri[q]) if st.trans == "N" else (st.a.operand, tri[q], tri[p])
        return tri, nonzero, tile

    def trsm(self, st: Stmt, rng, trows, tcols):
        tri, nonzero, tile = self._tri(st, rng)
        eff_lower = (st.uplo == "L") == (st.trans == "N")
        left = st.side == "L"
        # left: X[p] depends on X[q] for q before p (lower: ascending); right: the other way round
        order = list(range(len(tri))) if eff_lower == left else list(range(len(tri) - 1, -1, -1))
        if (len(trows) if left else len(tcols)) != len(tri):
            raise Unsupported(f"{st.text}: the triangle and the solved block do not match")
        name = st.target.operand
        others = range(len(tcols)) if left else range(len(trows))
        for o in others:
            done = []
            for p in order:
                pos = (p, o) if left else (o, p)
                target = (name, trows[pos[0]], tcols[pos[1]])
                ins, steps = [], []
                for q in done:
                    if not (nonzero(p, q) if left else nonzero(q, p)):
                        continue
                    solved = (name, trows[q], tcols[o]) if left else (name, trows[o], tcols[q])
                    if left:
                        ins += [tile(p, q), solved]
                        steps.append(Stmt("gemm", W, -1 / st.alpha, trans=st.trans, a=Span(str(len(ins) - 2), None, None),
                                          b=Span(str(len(ins) - 1), None, None)))
                    else:
                        ins += [solved, tile(q, p)]
                        steps.append(Stmt("gemm", W, -1 / st.alpha, trans_b=st.trans, a=Span(str(len(ins) - 2), None, None),
                                          b=Span(str(len(ins) - 1), None, None)))
                ins.append((st.a.operand, tri[p], tri[p]))
                steps.append(Stmt("trsm", W, st.alpha, st.side, st.uplo, st.trans, diag=st.diag,
                                  a=Span(str(len(ins) - 1), None, None)))
                self.write([target, ins, steps], st, self.k)
                done.append(p)

    def trmm(self, st: Stmt, rng, trows, tcols):
        tri, nonzero, tile = self._tri(st, rng)
        left = st.side == "L"
        if (len(trows) if left else len(tcols)) != len(tri):
            raise Unsupported(f"{st.text}: the triangle and the multiplied block do not match")
        name, snapshot = st.target.operand, dict(self.state)
        old = {}
        for x, y in [(x, y) for x in range(len(trows)) for y in range(len(tcols))]:
            p = x if left else y
            ins = [(st.a.operand, tri[p], tri[p])]
            steps = [Stmt("trmm", W, st.alpha, st.side, st.uplo, st.trans, diag=st.diag, a=Span("0", None, None))]
            for q in range(len(tri)):
                if q == p or not (nonzero(p, q) if left else nonzero(q, p)):
                    continue
                if left:
                    ins += [tile(p, q), (name, trows[q], tcols[y])]
                    steps.append(Stmt("gemm", W, st.alpha, trans=st.trans, a=Span(str(len(ins) - 2), None, None),
                                      b=Span(str(len(ins) - 1), None, None)))
                else:
                    ins += [(name, trows[x], tcols[q]), tile(q, p)]
                    steps.append(Stmt("gemm", W, st.alpha, trans_b=st.trans, a=Span(str(len(ins) - 2), None, None),
                                      b=Span(str(len(ins) - 1), None, None)))
            old[(name, trows[x], tcols[y])] = (ins, steps)
        for target, (ins, steps) in old.items():
            self.write([target, ins, steps], st, self.k, snapshot)

    def triacc(self, st: Stmt, rng, trows, tcols):
        tri, nonzero, tile = self._tri(st, rng)
        left = st.side == "L"
        other = st.b
        for x, y in self._targets(st, trows, tcols):
            ins, steps = [], []
            p_out = x if left else y
            for q in range(len(tri)):
                if not (nonzero(p_out, q) if left else nonzero(q, p_out)):
                    continue
                ox = self._op_tile(other, rng, q, y, st.trans_b) if left else self._op_tile(other, rng, x, q, st.trans_b)
                if q == p_out:
                    ins += [(st.a.operand, tri[q], tri[q]), ox]
                    steps.append(Stmt("triacc", W, st.alpha, st.side, st.uplo, st.trans, st.trans_b, st.diag,
                                      a=Span(str(len(ins) - 2), None, None), b=Span(str(len(ins) - 1), None, None)))
                elif left:
                    ins += [tile(p_out, q), ox]
                    steps.append(Stmt("gemm", W, st.alpha, trans=st.trans, trans_b=st.trans_b,
                                      a=Span(str(len(ins) - 2), None, None), b=Span(str(len(ins) - 1), None, None)))
                else:
                    ins += [ox, tile(q, p_out)]
                    steps.append(Stmt("gemm", W, st.alpha, trans=st.trans_b, trans_b=st.trans,
                                      a=Span(str(len(ins) - 2), None, None), b=Span(str(len(ins) - 1), None, None)))
            if steps:
                self.write([(st.target.operand, trows[x], tcols[y]), ins, steps], st, self.k)

    def copy(self, st: Stmt, rng, trows, tcols):
        snapshot = dict(self.state)
        todo = []
        for x, y in self._targets(st, trows, tcols):
            src = self._op_tile(st.a, rng, x, y, st.trans)
            diag = trows[x] == tcols[y] and st.uplo != "G"
            todo.append(((st.target.operand, trows[x], tcols[y]), [src],
                         [Stmt("copy", W, st.alpha, uplo=st.uplo if diag else "G", trans=st.trans,
                               a=Span("0", None, None))]))
        for item in todo:
            self.write(item, st, self.k, snapshot)


def plan(kernel: Kernel, tiles: int, shape: dict | None = None) -> Plan:
    """The tile tasks of ``kernel`` over ``tiles`` diagonal tiles; ``shape``: operand -> (row
    tiles, column tiles) (default: ``tiles`` along a partitioned dimension, 1 along a free one)."""
    if kernel.classes:
        raise Unsupported(f"{kernel.name}: its rows and columns move different ways (two dimension classes, "
                          "as in the Sylvester equation); the tile graph has one tile index")
    if kernel.finish:
        raise Unsupported(f"{kernel.name}: steps after the loop ({', '.join(s.text for s in kernel.finish)}) "
                          "have no tile form")
    default = {"2x2": (tiles, tiles), "rows": (tiles, 1), "columns": (1, tiles)}
    shape = {o.name: (shape or {}).get(o.name, default[o.partition]) for o in kernel.operands}
    b = _Builder(kernel, tiles, shape)
    order = range(tiles) if kernel.direction == "TL->BR" else range(tiles - 1, -1, -1)
    for k in order:
        b.k = k
        for st in kernel.body:
            b.stmt(st, k)
    return Plan(kernel.name, tiles, tuple(b.tasks), dict(b.state))


def _shift(step: Stmt, by: int) -> Stmt:
    from dataclasses import replace
    move = {k: Span(str(int(getattr(step, k).operand) + by), None, None)
            for k in ("a", "b") if getattr(step, k) is not None}
    return replace(step, **move)


def contract(p: Plan) -> Plan:
    """The plan with every chain of updates of one tile merged into one task where the versions
    in between are read by nothing else (a tile's successive syrk/gemm updates, a trsm followed by
    its trmm): fewer tasks and transfers, the same steps in the same order per tile.  A merged
    task takes the place of the chain's last task, so every input it reads is written before it;
    no cycle can arise, since nothing but the next link reads a merged version."""
    readers: dict = {}
    for j, t in enumerate(p.tasks):
        for v in {t.source, *t.inputs}:
            if v[0] == "t":
                readers.setdefault(v[1], set()).add(j)
    finals = {v[1] for v in p.final.values() if v[0] == "t"}
    merged: dict = {}                       # task index -> the merged TileTask ending there
    into: dict = {}                         # task index -> the index of the task it was merged into
    for j, t in enumerate(p.tasks):
        src = t.source
        if src[0] == "t" and readers.get(src[1]) == {j} and src[1] not in finals and src[1] not in t.inputs \
                and src[1] in merged:
            head = merged.pop(src[1])
            into[src[1]] = j
            n = len(head.inputs)
            t = TileTask(t.target, head.source, head.inputs + t.inputs,
                         head.steps + tuple(_shift(s, n) for s in t.steps), head.text, head.iteration)
        merged[j] = t
    order = sorted(merged)
    index = {old: new for new, old in enumerate(order)}

    def ver(v):
        if v[0] != "t":
            return v
        k = v[1]
        while k in into:
            k = into[k]
        return ("t", index[k])
    tasks = tuple(TileTask(t.target, ver(t.source), tuple(ver(v) for v in t.inputs), t.steps, t.text, t.iteration)
                  for t in (merged[k] for k in order))
    return Plan(p.kernel, p.tiles, tasks, {k: ver(v) for k, v in p.final.items()})
