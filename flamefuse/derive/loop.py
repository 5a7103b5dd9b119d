"""From one operation's invariant to its loop body, and from a fused invariant to a loop."""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.derive.blocks import Blk, FineTask, Place, blk_name, inplace, place_of, render
from flamefuse.derive.algebra import algebraic_update, check
from flamefuse.derive.dims import classes
from flamefuse.derive.evaluate import Evaluator, Options, Unsupported
from flamefuse.pme.invariant import Invariant
from flamefuse.pme.model import Operation, Problem, with_const_tasks
from flamefuse.spec.expr import parts_of, show_readable

TOP, BOTTOM = ("TL", "T", "L"), ("BR", "B", "R")
# a direction names the corner the computed part grows from and the one it grows to; each dimension
# class (dims.classes) moves forward (its computed part top/left: split after block 0 before the step,
# after block 1 after it) or backward; class 0 reads the first letter, class 1 the second
FORWARD, BACKWARD = (1, 2), (2, 1)
DIRECTIONS = {"TL->BR": (FORWARD, FORWARD), "BR->TL": (BACKWARD, BACKWARD),
              "BL->TR": (BACKWARD, FORWARD), "TR->BL": (FORWARD, BACKWARD)}
OPTIONS = tuple(Options(b, dist, inv) for inv in (True, False) for dist in (False, True) for b in (False, True))


@dataclass(frozen=True)
class NotDerivable:
    """An invariant the rules cannot turn into code, and why."""
    reason: str


@dataclass(frozen=True)
class Body:
    """One operation's part of a loop: its invariant (past tasks) and update (fine tasks in order)."""
    operation: str
    direction: str
    invariant: tuple[str, ...]
    update: tuple[FineTask, ...]

    def lines(self) -> list[str]:
        return [render(t) for t in self.update]


@dataclass(frozen=True)
class DerivedLoop:
    """A fused loop: the direction shared by all operations and each operation's body in order."""
    problem: str
    direction: str
    bodies: tuple[Body, ...]

    def update(self) -> tuple[FineTask, ...]:
        return tuple(t for b in self.bodies for t in b.update)

    def update_lines(self) -> list[str]:
        """The whole update, one line per fine task, in execution order."""
        return [line for b in self.bodies for line in b.lines()]

    def lines(self) -> list[str]:
        """The loop in FLAME notation: direction, then per operation its invariant and body."""
        out = [f"traverse {self.direction}"]
        for b in self.bodies:
            out.append(f"{b.operation}: invariant {{{'; '.join(b.invariant)}}}")
            out += [f"  {line}" for line in b.lines()]
        return out


def _names(problem: Problem) -> dict[str, str]:
    return {f"{o.name.lower()}_{p.lower()}": f"{o.name}_{p}" for o in problem.operands
            for p in parts_of(o.partition, o.structure)}


def layout(problem: Problem, splits: tuple[int, ...]) -> dict[str, Place]:
    """Every region of the problem on the 3x3 grid; ``splits[c]``: dimension class c splits after
    block index splits[c] - 1."""
    cls = classes(problem)
    # a class with no split of its own (an operand no operation uses, or one whose class is not
    # among the traversed ones) moves with the first class
    at = lambda c: splits[0] if c is None or c >= len(splits) else splits[c]
    return {f"{o.name.lower()}_{p.lower()}": place_of(o, p, at(cls[o.name][0]), at(cls[o.name][1]))
            for o in problem.operands for p in parts_of(o.partition, o.structure)}


def directions(problem: Problem, op: Operation, past: tuple[int, ...]) -> list[str]:
    """The traversals the operation's past op tasks allow: its computed parts lie on the side each
    dimension class starts from (TL->BR when they are top/left parts, BR->TL for bottom/right; with
    two classes, as the Sylvester equation has, each class on its own: BL->TR, ...)."""
    cls = classes(problem)
    per_class: list[set] = [set() for _ in range(1 + max(c for v in cls.values() for c in v if c is not None))]
    parts = set()
    for k in past:
        t = op.tasks[k]
        if t.kind != "op_eq":
            continue
        name, part = t.out.region.rsplit("_", 1)
        operand = next(o for o in problem.operands if o.name.lower() == name)
        part = part.upper()
        parts.add(part)
        rows, cols = cls[operand.name]
        letters = {"T": (rows, 0), "B": (rows, 1), "L": (cols, 0), "R": (cols, 1)}
        if len(part) == 1 and operand.partition == "columns":
            letters = {"L": (cols, 0), "R": (cols, 1)}
        for ch in part:
            c, side = letters[ch]
            per_class[c].add(side)
    if len(per_class) == 1:
        if parts and parts <= set(TOP):
            return ["TL->BR"]
        if parts and parts <= set(BOTTOM):
            return ["BR->TL"]
        raise Unsupported(f"operation {op.name}: cannot tell the traversal direction from past parts {sorted(parts)}")
    ways = [[FORWARD] if s == {0} else [BACKWARD] if s == {1} else [BACKWARD, FORWARD] for s in per_class[:2]]
    return [d for d, (v, h) in DIRECTIONS.items() if v in ways[0] and h in ways[1]]


def direction(problem: Problem, op: Operation, past: tuple[int, ...]) -> str:
    """The first traversal :func:`directions` allows."""
    return directions(problem, op, past)[0]


def fine(problem: Problem, op: Operation, past: tuple[int, ...], s, opts: Options,
         stale: frozenset = frozenset(), read: set | None = None, memo: dict | None = None):
    """The fine tasks of the past tasks ``past`` on the grid split at ``s``, and the version each
    block reaches; ``read`` (a set) gets the names of the options the rules read.  ``memo`` (a
    dict the caller keeps while ``problem`` and ``op`` live) keeps each result: the directions
    and the algebra's second try evaluate the same states again (the after-state of TL->BR is
    the before-state of BR->TL), and the layout of each split.  Callers only read the lists and
    dicts returned."""
    key = (id(problem), id(op), tuple(past), tuple(s), opts, stale)
    if memo is not None and key in memo:
        seq, cur, names = memo[key]
        if read is not None:
            read |= names
        return seq, cur
    cur: dict = {}
    seq: list = []
    names: set = set()
    grid = None if memo is None else memo.get((id(problem), tuple(s)))
    if grid is None:
        grid = layout(problem, s)
        if memo is not None:
            memo[(id(problem), tuple(s))] = grid
    try:
        Evaluator(grid, cur, seq, opts, stale, names).run([op.tasks[k] for k in sorted(past)])
    finally:                       # a failed evaluation read these options on its way
        if read is not None:
            read |= names
    if memo is not None:
        memo[key] = (seq, cur, frozenset(names))
    return seq, cur


def stale_regions(problem: Problem, invariant_past, i: int) -> frozenset:
    """Regions that an operation before ``i`` still has future tasks on in this invariant: their
    storage does not yet hold operation ``i``'s input (see :mod:`flamefuse.derive.evaluate`)."""
    return frozenset(t.out.region for op, past in zip(problem.operations[:i], invariant_past[:i])
                     for k, t in enumerate(op.tasks) if t.kind != "const" and k not in past)


def schedule(body: list[FineTask], start: dict) -> list[FineTask]:
    """Order the update so each task finds its target and inputs at the versions it names.

    Ready accumulations go first, then the other tasks in derivation order; a
    depth-first search backs up where this greedy choice would strand a read.
    """
    rank = {t: (t.kind != "acc", i) for i, t in enumerate(body)}
    dead: set = set()

    def ready(t, cur) -> bool:
        ver = cur.get(t.target, frozenset())
        ok = (inplace(ver) == t.base and t not in ver) if t.kind == "acc" else ver == t.base
        return ok and all(cur.get(r.blk, frozenset()) == r.ver for r in t.reads())

    def go(cur, done, order):
        if len(order) == len(body):
            return order
        key = frozenset(order)
        if key in dead:
            return None
        for t in sorted((t for t in body if t not in done and ready(t, cur)), key=rank.get):
            nxt = dict(cur)
            nxt[t.target] = cur.get(t.target, frozenset()) | {t}
            found = go(nxt, done | {t}, order + [t])
            if found is not None:
                return found
        dead.add(key)
        return None

    for t in body:
        for r in t.reads():
            if not start.get(r.blk, frozenset()) <= r.ver:
                raise Unsupported(f"{render(t)!r} needs a value of {blk_name(r.blk)} that the before-state has "
                                  "already overwritten (a temporary copy would be needed)")
    order = go(dict(start), frozenset(), [])
    if order is None:
        raise Unsupported("the update's dependences form a cycle (a temporary copy would be needed)")
    return order


def derive_operation(problem: Problem, op: Operation, past: tuple[int, ...], d: str | None = None,
                     algebra: tuple[bool, ...] = (False, True), stale: frozenset = frozenset(),
                     memo: dict | None = None) -> Body:
    """The update of one operation for one invariant (traversal ``d``, default the first allowed):
    After \\ Before, ordered.

    The open choices of the rules (:class:`Options`) are tried in order; the
    first that yields an update wins, else the first failure is reported.  An
    attempt depends on the options only through those its rules read: a choice
    that agrees with a failed attempt on all of them would fail the same way and
    is not tried (most invariants meet no choice: one attempt instead of eight).
    """
    real = tuple(k for k in past if op.tasks[k].kind != "const")
    d = d or direction(problem, op, real)
    first = None
    failed: list[tuple[bool, set, Options]] = []     # (algebra, options read, options) of failed attempts
    for opts, alg in [(o, a) for a in algebra for o in OPTIONS]:
        if any(a == alg and all(getattr(o, n) == getattr(opts, n) for n in names) for a, names, o in failed):
            continue                # fails as that attempt did
        read: set = set()
        try:
            update = _update(problem, op, real, d, opts, alg, stale, read, memo)
        except Unsupported as why:
            first = first or why
            failed.append((alg, read, opts))
            continue
        names = _names(problem)
        return Body(op.name, d, tuple(show_readable(op.tasks[k], names) for k in real), update)
    raise first


def _update(problem: Problem, op: Operation, real: tuple[int, ...], d: str, opts: Options,
            algebra: bool, stale: frozenset = frozenset(), read: set | None = None,
            memo: dict | None = None) -> tuple:
    """The update for one choice of options; ``read`` gets the names of the options the rules
    read (only through :func:`fine`: what follows the evaluation does not look at them)."""
    s_before, s_after = zip(*DIRECTIONS[d])
    before, start = fine(problem, op, real, s_before, opts, stale, read, memo)
    after, end = fine(problem, op, real, s_after, opts, stale, read, memo)
    in_after, in_before = set(after), set(before)
    missing = [t for t in before if t not in in_after]
    if not missing:
        update = [t for t in after if t not in in_before]
    elif algebra:     # the before-state holds a term the after-state lacks: the algebra finds the update
        update = algebraic_update(before, after, start, end)
    else:
        raise Unsupported(f"operation {op.name}: the before-state holds {render(missing[0])!r}, which the "
                          "after-state does not (the update would have to cancel it)")
    ordered = tuple(schedule(update, start))
    check(before, after, start, end, ordered)
    return pivoted_panel(ordered, d)


def pivoted_panel(update: tuple[FineTask, ...], d: str) -> tuple[FineTask, ...]:
    """Partial pivoting: ``A11 := lu(A11)`` (pivoted) and ``A21 := A21 upper(A11)^{-1}`` become one
    panel factorization ``[A11; A21] := lu([A11; A21])`` with row interchanges (docs/pivoting.md).

    The pivot of a column is chosen over the whole panel, so the panel must be complete (every
    update of A21 done) when A11 is factored, and the traversal must be TL->BR.
    """
    k = next((k for k, t in enumerate(update) if t.kind == "lu" and t.form == "P"), None)
    if k is None:
        return update
    lu = update[k]
    below = Blk(lu.target.operand, lu.target.i + 1, lu.target.j)
    if d != "TL->BR":
        raise Unsupported("LU with partial pivoting traverses TL->BR")
    solve = [j for j, t in enumerate(update) if t.target == below and t.kind == "trsm" and t.side == "R"
             and t.a.ref.blk == lu.target and t.a.kind == "UU"]
    if not solve:
        raise Unsupported(f"partial pivoting picks each pivot from the whole column below the diagonal, but this "
                          f"invariant does not compute {blk_name(below)} in the step that factors "
                          f"{blk_name(lu.target)} (as in libflame, only the variants that compute L21 with the "
                          "diagonal block can pivot; lu_nopiv derives this one)")
    late = [t for t in update[k + 1:solve[0]] if t.target == below]
    if late:
        raise Unsupported(f"pivoting needs the panel complete before {render(lu)!r}, but {render(late[0])!r} "
                          "comes after it")
    # The interchanges permute rows i.. of every column: those rows must all hold the same stage
    # of the computation, so updates of other row blocks in these rows (A12 -= A10 A02 in the
    # Crout variant) wait until after the swap, as in libflame's LU_piv.
    rows_below = lambda t: (t.target.operand == lu.target.operand and t.target.i is not None
                            and t.target.i >= lu.target.i and t.target.j != lu.target.j)
    moved = [t for t in update[:k] if rows_below(t)]
    stay = [t for t in update[:k] if not rows_below(t)]
    if any(r.blk == m.target for t in stay for r in t.reads() for m in moved):
        raise Unsupported("pivoting: an update of the panel reads a block that must wait for the row swaps")
    panel = FineTask("lu_panel", lu.target, lu.base, form="P")
    rest = tuple(t for j, t in enumerate(update) if j > k and j != solve[0])
    return tuple(stay) + (panel,) + tuple(moved) + rest


def derive_solution(problem: Problem, invariant: Invariant) -> DerivedLoop | NotDerivable:
    """Derive the fused loop of one invariant, or say why it cannot be derived."""
    full = with_const_tasks(problem)
    for op in full.operations:
        if op.note or not op.exact:
            return NotDerivable(f"operation {op.name}: {op.note or 'no exact PME (explicit tasks)'}")
    try:
        dirs = [directions(full, op, past) for op, past in zip(full.operations, invariant.past)]
    except Unsupported as why:
        return NotDerivable(str(why))
    common = [d for d in dirs[0] if all(d in ds for ds in dirs)]
    if not common:
        return NotDerivable("the operations traverse in different directions: "
                            + ", ".join(f"{op.name} {'/'.join(ds)}" for op, ds in zip(full.operations, dirs)))
    first = None
    memo: dict = {}                # fine's evaluations, shared by the directions and tries below
    for d, algebra in [(d, a) for a in ((False,), (True,)) for d in common]:   # the algebra is the last resort
        try:
            bodies = tuple(derive_operation(full, op, past, d, algebra, stale_regions(full, invariant.past, i), memo)
                           for i, (op, past) in enumerate(zip(full.operations, invariant.past)))
        except Unsupported as why:
            first = first or why
            continue
        return DerivedLoop(problem.name, d, bodies)
    return NotDerivable(str(first))
