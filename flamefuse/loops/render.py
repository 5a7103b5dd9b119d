"""A loop site rendered as a Numba function for one signature of its arguments.

``render(site, sig) -> str`` gives the text of a module defining ``loop(<params>, _fp, _fg, _w,
_E, _S)``: the site's loop as written, with every name of the script prefixed ``v_`` (so no
script name meets one of ours), for the argument types ``sig`` (one code per parameter:
``'i'`` an int, ``'f'`` a float, ``'a<n>'`` an n-D float64 array). ``_fp`` and ``_fg`` are the
addresses of NumPy's ``cblas_ddot`` and ``cblas_dgemv``; ``_w`` is the caller's scratch memory,
which the loop splits into the buffers its ``# buffers: NE NS`` line declares (``NE`` of ``_E``
doubles, the largest extent of an argument: ``_s0``, the dots' ``_s1``/``_s2``, one per
vector-matrix product and per local array; ``NS`` of ``_S``, the largest size: a 2-D
statement's temporary). It raises :class:`~flamefuse.loops.extract.Refused` when the loop
cannot be compiled exactly for those types.

Types are inferred statement by statement: an int (with a bound on its bits: a parameter,
``X.shape[k]`` 31, a literal its own, ``+ -`` one more than the larger, ``*`` the sum; a loop
variable the larger of its range's bounds), a float, a bool (comparisons, in ``if`` tests only),
an array of rank n, a 1-D or a 2-D view (a subscript with one or two slices). Refused: an int
that could exceed 62 bits (Python's ints do not overflow, int64 would), an int of more than 53
bits where it becomes a float (Python converts exactly rounded; so does the compiled code only
below 2**53), a local int assigned more than once or carried from one iteration to the next, a
float variable whose value on entry is an int, a subscript whose index count is not the
array's rank or that has more than two slices, arithmetic on arrays outside a slice statement.

What is rendered differently from the source, and why it is NumPy's result:

* ``np.dot(u, v)`` and ``u @ v`` of 1-D views (any strides) call ``_dot_np`` and ``_dot_mm``
  (:mod:`flamefuse.loops.numba_parts`): NumPy's own choice of BLAS or loop, NumPy's own ddot.
  ``u @ M`` and ``M @ v`` (a 1-D and a 2-D view) call ``_vecmat`` / ``_matvec``: NumPy's
  ``DOUBLE_matmul`` dispatch (``cblas_dgemv`` with NumPy's order and leading dimension, its
  ``DOUBLE_dot``, or its loop), into a scratch buffer, before the statement writes anything.
* A scalar ``a / b`` is ``_div(a, b)``, which raises (the loop then runs as written) where ``b``
  is zero: Python raises ``ZeroDivisionError`` for Python floats and ints even where IEEE
  raises no flag (``nan / 0.0``).
* Every value a statement computes, and every ``if`` test, is passed to ``_keep``: LLVM would
  otherwise drop a computation whose result is never used (a local overwritten before it is
  read, an element stored twice) and with it the floating-point flag NumPy warns about. In a
  slice statement's element loop every element's bits are ORed into one word, kept after it.
* ``min(a, b)`` / ``max(a, b)`` are ``(b if b < a else a)`` / ``(b if b > a else a)``: Python's
  built-ins for two arguments (NaN included).
* A statement whose target is a 1-D or 2-D view (``y[:k] += alpha * y[k - 1::-1]``,
  ``a[k + 1:, k:] -= f[:, None] * a[k, k:]``, ``A[:, k + 1:] -= np.outer(q, r)``) is an element
  loop over the target: each element the operations NumPy's ufuncs do on it, in NumPy's order
  (``x -= y * z`` is a product, rounded, then a difference: never a fused multiply-add, which
  Numba does not emit without ``fastmath``), ``np.outer(u, v)`` as ``u[i] * v[j]``, the scalar
  parts evaluated once before. NumPy computes the right side into a temporary before it writes
  (and copies an operand that overlaps its output), so: where ``_overlaps`` (a run-time test of
  each operand view against the target: byte ranges, and for views of one array the boxes of
  indices they span) proves no operand shares an element with the target, the loop writes
  straight into it; else it computes every element into a scratch buffer first, then updates
  the target. Broadcasting is NumPy's where it is static: an operand's missing leading
  dimensions and its ``None`` axes repeat it; every other extent must equal the target's (else
  ``ValueError``: the loop then runs as written, where NumPy broadcasts a length 1 or raises).
  An operation whose operands span fewer dimensions than the target (``(f[:, None] * s) * r``)
  is computed by NumPy even where the target is empty (with its warnings): there the loop
  raises, and runs as written.
* A local array (``f = a[k + 1:, k] / a[k, k]``: a computed 1-D value, never a bare view, which
  would alias) is its own scratch buffer, filled the same way; it may not read itself.
"""
from __future__ import annotations

import ast
import re

from flamefuse.loops.extract import BINOPS, Refused, Site

VERSION = "3"       # in the rendered text: a change of the renderer rebuilds every loop library
INT_BITS = 62       # an int expression's bound
EXACT_BITS = 53     # ints converted to floats


def _i(bits):
    return ("i", bits)


F = ("f",)
B = ("b",)
V = ("v",)          # a 1-D view
V2 = ("v2",)        # a 2-D view


class _Node:
    """An element-wise expression over ``rank`` dimensions: its text per element (``@d@`` the
    index of dimension ``d``), ``checks`` (view, view dimension, dimension: extents that must be
    the target's), ``views`` (view, the array it is a view of, or None for a scratch buffer),
    ``ops`` (per operation that may raise a flag, the dimensions its operands span)."""
    __slots__ = ("text", "rank", "checks", "views", "ops")

    def __init__(self, text, rank, checks=(), views=(), ops=()):
        self.text, self.rank = text, rank
        self.checks, self.views, self.ops = list(checks), list(views), list(ops)

    def covered(self) -> frozenset:
        return frozenset(d for _, _, d in self.checks)

    def align(self, rank) -> "_Node":
        """The same expression as an operand of a ``rank``-D one (NumPy's broadcasting aligns
        dimensions on the right)."""
        shift = rank - self.rank
        if shift == 0:
            return self
        text = self.text
        for d in range(self.rank - 1, -1, -1):
            text = text.replace(f"@{d}@", f"@{d + shift}@")
        return _Node(text, rank, [(v, k, d + shift) for v, k, d in self.checks], self.views,
                     [frozenset(d + shift for d in ops) for ops in self.ops])

    def uncovered(self, rank) -> bool:
        """Some operation spans fewer dimensions than the target: NumPy computes it (and may
        warn) even where the target is empty."""
        return any(len(ops) < rank for ops in self.ops)


def _is_none(p) -> bool:
    return isinstance(p, ast.Constant) and p.value is None


def _matrix(t) -> bool:
    return t == V2 or t == ("a", 2)


class _Render:
    def __init__(self, site: Site, sig: tuple):
        self.site = site
        self.types: dict = {}
        self.int_assigned: set = set()
        for name, code in zip(site.params, sig):
            if code == "i":
                self.types[name] = _i(31)
            elif code == "f":
                self.types[name] = F
            elif code.startswith("a"):
                self.types[name] = ("a", int(code[1:]))
            else:
                raise Refused(f"argument {name}: no compiled form of its type")
        for name in site.params:
            kind = self.types[name][0]
            if name in site.arrays and kind != "a":
                raise Refused(f"{name} is used as an array but is not a float64 array")
        self.lines: list = []
        self.count = 0
        self.locals_: dict = {}         # local array name -> its scratch buffer
        self.buffers: list = []         # (name, 'E' | 'S'): scratch buffers besides _s0, _s1, _s2
        self.sized = None               # the buffer of a 2-D statement's temporary
        self.helpers: list = []         # the element loops' functions (module level)

    def refuse(self, node, what):
        raise Refused(f"line {getattr(node, 'lineno', '?')}: {what}")

    def fresh(self, prefix):
        self.count += 1
        return f"_{prefix}{self.count}"

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    # -- statements
    def block(self, body, depth):
        if not body:
            self.emit(depth, "pass")
        for st in body:
            self.stmt(st, depth)

    def stmt(self, st, depth):
        if isinstance(st, ast.Pass):
            self.emit(depth, "pass")
        elif isinstance(st, ast.For):
            args = []
            bits = 0
            for a in st.iter.args:
                text, t = self.expr(a)
                if t[0] != "i":
                    self.refuse(a, "range() of a non-int")
                args.append(text)
                bits = max(bits, t[1])
            v = st.target.id
            self.types[v] = _i(max(bits, 1))
            self.emit(depth, f"for v_{v} in range({', '.join(args)}):")
            self.block(st.body, depth + 1)
        elif isinstance(st, ast.If):
            c = self.fresh("c")
            self.emit(depth, f"{c} = {self.test(st.test)}")
            self.emit(depth, f"_keep({c})")
            self.emit(depth, f"if {c}:")
            self.block(st.body, depth + 1)
            if st.orelse:
                self.emit(depth, "else:")
                self.block(st.orelse, depth + 1)
        elif isinstance(st, (ast.Assign, ast.AugAssign)):
            target = st.targets[0] if isinstance(st, ast.Assign) else st.target
            op = None if isinstance(st, ast.Assign) else BINOPS[type(st.op)]
            if isinstance(target, ast.Name):
                self.assign_name(target, op, st.value, depth)
            else:
                self.assign_subscript(target, op, st.value, depth)
        else:
            self.refuse(st, f"the statement {type(st).__name__}")

    def assign_name(self, target, op, value, depth):
        name = target.id
        if self.rank(value) > 0:
            self.assign_local_array(target, op, value, depth)
            return
        text, t = self.expr(value)
        if t[0] not in ("i", "f"):
            self.refuse(value, "a value that is not a number assigned to a name")
        if op is not None:
            old = self.types.get(name)
            if old is None:
                self.refuse(target, f"{name} is updated before it has a value")
            t = self.arith(target, old, op, t)
            text = f"_div(v_{name}, {text})" if op == "/" else f"(v_{name} {op} {text})"
        if t[0] == "i":
            if name in self.site.params or name in self.int_assigned or op is not None:
                self.refuse(target, f"the int variable {name} is assigned more than once or carried across iterations")
            self.int_assigned.add(name)
            self.types[name] = t
        else:
            old = self.types.get(name)
            if old is not None and old != F:
                self.refuse(target, f"{name} holds an int and then a float")
            self.types[name] = F
        self.emit(depth, f"v_{name} = {text}")
        self.emit(depth, f"_keep(v_{name})")

    def assign_local_array(self, target, op, value, depth):
        """``f = <element-wise expression of 1-D views>``: a new array (NumPy's temporary), here
        the name's own scratch buffer, filled element by element (it reads no view of itself)."""
        name = target.id
        if op is not None:
            self.refuse(target, f"an augmented assignment to the local array {name}")
        if name in self.site.params:
            self.refuse(target, f"the local array {name} may be read before it is assigned")
        if isinstance(value, (ast.Name, ast.Subscript)):
            self.refuse(value, f"a view bound to the name {name} (only computed arrays)")
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)):
            self.refuse(value, f"the local array {name} computed from itself")
        old = self.types.get(name)
        if old is not None and old != ("a", 1):
            self.refuse(target, f"{name} holds arrays and numbers")
        binds: list = []
        node = self.elementwise(value, binds)
        if node.rank != 1:
            self.refuse(value, f"a local array {name} of other than one dimension")
        if not node.checks:
            self.refuse(value, f"the local array {name} has no extent from a view")
        self.types[name] = ("a", 1)
        buf = self.locals_.get(name)
        if buf is None:
            buf = self.locals_[name] = self.buffer("E")
        length = self.fresh("n")
        self.emit_binds(binds, depth)
        view, k, _ = node.checks[0]
        self.emit(depth, f"{length} = {view}.shape[{k}]")
        self.emit_checks(node, [length], depth)
        if node.uncovered(1):
            self.emit(depth, f"if {length} == 0:")
            self.emit(depth + 1, "raise ValueError('an intermediate NumPy would compute')")
        self.emit(depth, f"v_{name} = {buf}[:{length}]")
        self.element_loop(f"v_{name}", None, node, [length], depth, direct=True)

    def assign_subscript(self, target, op, value, depth):
        ttext, tt = self.subscript(target)
        if tt == F:
            if self.rank(value) > 0:
                self.refuse(value, "an array assigned to one element")
            text, t = self.expr(value)
            if t[0] not in ("i", "f"):
                self.refuse(value, "an array assigned to one element")
            self.to_float(value, t)
            self.emit(depth, f"{ttext} = {ttext} {op} ({text})" if op else f"{ttext} = {text}")
            self.emit(depth, f"_keep({ttext})")
            return
        rank = 1 if tt == V else 2
        binds: list = []
        node = self.elementwise(value, binds)
        if node.rank > rank:
            self.refuse(value, f"a {node.rank}-D value assigned to a {rank}-D view")
        node = node.align(rank)
        tv = self.fresh("t")
        self.emit(depth, f"{tv} = {ttext}")
        self.emit_binds(binds, depth)
        extents = [f"{tv}.shape[{d}]" for d in range(rank)]
        self.emit_checks(node, extents, depth)
        if node.uncovered(rank):
            self.emit(depth, f"if {tv}.size == 0:")
            self.emit(depth + 1, "raise ValueError('an intermediate NumPy would compute')")
        base = f"v_{target.value.id}"
        overlaps = [f"_overlaps({tv}, {base}, {view}, {vb})" for view, vb in node.views if vb is not None]
        if not overlaps:
            self.element_loop(tv, op, node, extents, depth, direct=True)
            return
        ov = self.fresh("o")
        self.emit(depth, f"{ov} = " + " or ".join(overlaps))
        self.emit(depth, f"if {ov}:")
        self.element_loop(tv, op, node, extents, depth + 1, direct=False)
        self.emit(depth, "else:")
        self.element_loop(tv, op, node, extents, depth + 1, direct=True)

    def emit_binds(self, binds, depth):
        for name, text in binds:
            self.emit(depth, f"{name} = {text}")
            if name.startswith("_c"):
                self.emit(depth, f"_keep({name})")     # (computed even where the view is empty)

    def emit_checks(self, node, extents, depth):
        """Each indexed dimension of an operand has the target's extent (else ValueError: the
        loop runs as written, where NumPy broadcasts a length 1 or raises)."""
        for view, k, d in node.checks:
            self.emit(depth, f"if {view}.shape[{k}] != {extents[d]}:")
            self.emit(depth + 1, "raise ValueError('operands could not be broadcast')")

    def element_loop(self, tv, op, node, extents, depth, direct):
        """The element loops of ``tv <op>= node``, as a function of their own (``_stN``, called
        here): ``direct`` computes each element and stores it (no operand view may share an
        element with ``tv``); else every element is computed into a scratch buffer first
        (NumPy's temporary), then ``tv`` is updated from it. Every value computed is ORed into
        one word, returned and kept (``_keep``), so none is dropped and the loops vectorize. The
        function has no bounds checks: every index is below an extent of the target, which
        each operand's extent was checked to equal, and the scratch buffers hold the largest
        extent (``_s0``) or size (a 2-D temporary) of the arguments, of which the target is a
        view."""
        rank = len(extents)
        ms = [self.fresh("m") for _ in range(rank)]
        elem = node.text
        for d, m in enumerate(ms):
            elem = elem.replace(f"@{d}@", m)
        names = sorted(set(re.findall(r"\b_[ecg]\d+\b", elem)), key=lambda n: int(n[2:]))
        at = f"_t[{', '.join(ms)}]"
        if rank == 1:
            flat, tmp = ms[0], "_s0"
        else:
            flat, tmp = f"{ms[0]} * _t.shape[1] + {ms[1]}", self.sized_buffer()
        fn = self.fresh("st")
        lines = ["@njit(error_model='numpy', boundscheck=False)",
                 f"def {fn}(_t, _u, {', '.join(names)}):" if names else f"def {fn}(_t, _u):",
                 "    _k = 0"]

        def loops():
            for d, m in enumerate(ms):
                lines.append("    " * (d + 1) + f"for {m} in range(_t.shape[{d}]):")
        inner = "    " * (rank + 1)
        loops()
        lines += [f"{inner}_x = {elem}", f"{inner}_k |= _bits(_x)"]
        if direct:
            lines.append(f"{inner}{at} = {at} {op} _x" if op else f"{inner}{at} = _x")
        else:
            lines.append(f"{inner}_u[{flat}] = _x")
            loops()
            lines.append(f"{inner}{at} = {at} {op} _u[{flat}]" if op else f"{inner}{at} = _u[{flat}]")
        lines.append("    return _k")
        self.helpers.append("\n".join(lines))
        kw = self.fresh("k")
        self.emit(depth, f"{kw} = {fn}({', '.join([tv, tmp] + names)})")
        self.emit(depth, f"_keep({kw})")

    def buffer(self, kind):
        """A new scratch buffer's name: ``E`` of the largest extent, ``S`` of the largest size."""
        name = self.fresh("b")
        self.buffers.append((name, kind))
        return name

    def sized_buffer(self):
        if self.sized is None:
            self.sized = self.buffer("S")
        return self.sized

    # -- element-wise expressions (a statement's right side over a view)
    def rank(self, e) -> int:
        """The number of dimensions of ``e``'s value (0: a number), from the types so far."""
        if isinstance(e, ast.Name):
            t = self.types.get(e.id, F)
            return t[1] if t[0] == "a" else 0
        if isinstance(e, ast.Subscript):
            if _is_shape(e) or not isinstance(e.value, ast.Name):
                return 0
            t = self.types.get(e.value.id, F)
            if t[0] != "a":
                return 0
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            return sum(isinstance(p, ast.Slice) or _is_none(p) for p in parts)
        if isinstance(e, ast.BinOp):
            left, right = self.rank(e.left), self.rank(e.right)
            if isinstance(e.op, ast.MatMult):
                return {(1, 1): 0, (1, 2): 1, (2, 1): 1}.get((left, right), 3)
            return max(left, right)
        if isinstance(e, ast.UnaryOp):
            return self.rank(e.operand)
        if isinstance(e, ast.Call):
            if isinstance(e.func, ast.Attribute) and e.func.attr == "outer":
                return 2
            if isinstance(e.func, ast.Attribute) and e.func.attr == "dot":
                return 0
            return max((self.rank(a) for a in e.args), default=0)
        return 0

    def elementwise(self, e, binds) -> "_Node":
        """``e`` per element (placeholders ``@d@`` for its dimensions): its views bound in
        ``binds`` (checked against the target's extents), its scalar parts evaluated once (bound
        too), products ``@`` of a vector and a matrix computed whole first (NumPy's call, into a
        scratch buffer), ``np.outer(u, v)`` as ``u[i] * v[j]``, broadcasting by NumPy's rules
        where it is static (missing leading dimensions, ``None``)."""
        if self.rank(e) == 0:
            text, t = self.expr(e)
            if t[0] not in ("i", "f"):
                self.refuse(e, "an array in an element-wise expression")
            self.to_float(e, t)
            name = self.fresh("c")
            binds.append((name, text))
            return _Node(name, 0)
        if isinstance(e, ast.BinOp) and type(e.op) in BINOPS:
            left, right = self.elementwise(e.left, binds), self.elementwise(e.right, binds)
            rank = max(left.rank, right.rank)
            left, right = left.align(rank), right.align(rank)
            node = _Node(f"({left.text} {BINOPS[type(e.op)]} {right.text})", rank,
                         left.checks + right.checks, left.views + right.views, left.ops + right.ops)
            node.ops.append(node.covered())
            return node
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            inner = self.elementwise(e.operand, binds)     # (no operation that can warn)
            if isinstance(e.op, ast.USub):
                inner.text = f"(-{inner.text})"
            return inner
        if (isinstance(e, ast.Call) and len(e.args) == 1
                and (isinstance(e.func, ast.Attribute) and e.func.attr in ("sqrt", "abs")
                     or isinstance(e.func, ast.Name) and e.func.id == "abs")):
            inner = self.elementwise(e.args[0], binds)
            if isinstance(e.func, ast.Attribute) and e.func.attr == "sqrt":
                inner.text = f"np.sqrt({inner.text})"
                inner.ops.append(inner.covered())
            else:
                inner.text = f"abs({inner.text})"
            return inner
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "outer":
            if any(not isinstance(a, (ast.Name, ast.Subscript)) for a in e.args):
                self.refuse(e, "np.outer of other than two 1-D views")
            u, v = (self.view_leaf(a, binds) for a in e.args)
            if u.rank != 1 or v.rank != 1 or len(u.checks) != 1 or len(v.checks) != 1:
                self.refuse(e, "np.outer of other than two 1-D views")
            v = v.align(2)
            node = _Node(f"({u.text} * {v.text})", 2, u.checks + v.checks, u.views + v.views)
            node.ops.append(node.covered())
            return node
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            (lt, la), (rt, ra) = self.expr(e.left), self.expr(e.right)
            if la == V and _matrix(ra):
                call = "_vecmat"
            elif _matrix(la) and ra == V:
                call = "_matvec"
            else:
                self.refuse(e, "@ of other than 1-D and 2-D arrays")
            g = self.fresh("g")
            binds.append((g, f"{call}({lt}, {rt}, _fp, _fg, {self.buffer('E')})"))
            return _Node(f"{g}[@0@]", 1, [(g, 0, 0)], [(g, None)])
        return self.view_leaf(e, binds)

    def view_leaf(self, e, binds) -> "_Node":
        """A view operand: a name of an array or a subscript with slices (and ``None``s)."""
        if isinstance(e, ast.Name):
            t = self.types.get(e.id, F)
            if t[0] != "a" or t[1] > 2:
                self.refuse(e, "an element-wise operand other than a 1-D or 2-D array")
            dims = list(range(t[1]))
            text, base = f"v_{e.id}", (None if e.id in self.locals_ else f"v_{e.id}")
        elif isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and not _is_shape(e):
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            kept = [p for p in parts if not _is_none(p)]
            if not kept:
                self.refuse(e, "an index of None alone")
            stripped = ast.Subscript(value=e.value, ctx=ast.Load(),
                                     slice=ast.Tuple(elts=kept, ctx=ast.Load()) if len(kept) != 1 else kept[0])
            ast.copy_location(stripped, e)
            text, t = self.subscript(stripped)
            if t not in (V, V2):
                self.refuse(e, "an element-wise operand that is one element (with None)")
            dims, k = [], 0
            for p in parts:
                if _is_none(p):
                    dims.append(None)
                elif isinstance(p, ast.Slice):
                    dims.append(k)
                    k += 1
            if len(dims) > 2:
                self.refuse(e, "an operand of more than two dimensions")
            base = None if e.value.id in self.locals_ else f"v_{e.value.id}"
        else:
            self.refuse(e, "an element-wise expression other than + - * / np.sqrt abs of views and numbers, "
                           "np.outer of two vectors, @ of a vector and a matrix")
        name = self.fresh("e")
        binds.append((name, text))
        index = [f"@{d}@" for d, k in enumerate(dims) if k is not None]
        checks = [(name, k, d) for d, k in enumerate(dims) if k is not None]
        return _Node(f"{name}[{', '.join(index)}]", len(dims), checks, [(name, base)])

    # -- expressions
    def to_float(self, node, t):
        if t[0] == "i" and t[1] > EXACT_BITS:
            self.refuse(node, "an int that may exceed 2**53 used as a float")

    def arith(self, node, a, op, b):
        if a[0] not in ("i", "f") or b[0] not in ("i", "f"):
            self.refuse(node, "arithmetic on arrays (only on numbers)")
        if a[0] == "i" and b[0] == "i" and op != "/":
            bits = a[1] + b[1] if op == "*" else max(a[1], b[1]) + 1
            if bits > INT_BITS:
                self.refuse(node, "an int expression that may exceed 62 bits")
            return _i(bits)
        self.to_float(node, a)
        self.to_float(node, b)
        return F

    def expr(self, e):
        if isinstance(e, ast.Constant):
            if type(e.value) is int:
                if abs(e.value).bit_length() > INT_BITS:
                    self.refuse(e, "an int literal over 62 bits")
                return repr(e.value), _i(max(1, abs(e.value).bit_length()))
            if type(e.value) is float and e.value == e.value and abs(e.value) != float("inf"):
                return repr(e.value), F
            self.refuse(e, f"the constant {e.value!r}")
        if isinstance(e, ast.Name):
            t = self.types.get(e.id)
            if t is None:
                self.refuse(e, f"{e.id} has no value here")
            if t[0] == "a":
                return f"v_{e.id}", (V if t[1] == 1 else t)
            return f"v_{e.id}", t
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.MatMult):
                (lt, la), (rt, ra) = self.expr(e.left), self.expr(e.right)
                if la != V or ra != V:
                    self.refuse(e, "@ of other than two 1-D arrays")
                return f"_dot_mm({lt}, {rt}, _fp)", F
            (lt, la), (rt, ra) = self.expr(e.left), self.expr(e.right)
            op = BINOPS[type(e.op)]
            t = self.arith(e, la, op, ra)
            return (f"_div({lt}, {rt})" if op == "/" else f"({lt} {op} {rt})"), t
        if isinstance(e, ast.UnaryOp):
            t, ty = self.expr(e.operand)
            if ty[0] not in ("i", "f"):
                self.refuse(e, "a unary operator on an array")
            return (f"(-{t})" if isinstance(e.op, ast.USub) else f"(+{t})"), ty
        if isinstance(e, ast.Subscript):
            if _is_shape(e):
                name = e.value.value.id
                t = self.types[name]
                k = e.slice.value
                if not -t[1] <= k < t[1]:
                    self.refuse(e, f"{name}.shape[{k}] of a {t[1]}-D array")
                return f"v_{name}.shape[{k % t[1]}]", _i(31)
            return self.subscript(e)
        if isinstance(e, ast.Call):
            return self.call(e)
        self.refuse(e, f"the expression {type(e).__name__}")

    def subscript(self, e):
        name = e.value.id
        t = self.types.get(name)
        if t is None or t[0] != "a":
            self.refuse(e, f"{name} is not an array here")
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        if len(parts) != t[1]:
            self.refuse(e, f"{len(parts)} indices of the {t[1]}-D array {name}")
        texts, slices = [], 0
        for p in parts:
            if isinstance(p, ast.Slice):
                slices += 1
                bits = []
                for b in (p.lower, p.upper):
                    if b is None:
                        bits.append("")
                        continue
                    bt, bty = self.expr(b)
                    if bty[0] != "i":
                        self.refuse(b, "a slice bound that is not an int")
                    bits.append(bt)
                step = "" if p.step is None else f":{ast.unparse(p.step)}"
                texts.append(f"{bits[0]}:{bits[1]}{step}")
            else:
                pt, pty = self.expr(p)
                if pty[0] != "i":
                    self.refuse(p, "an index that is not an int")
                texts.append(pt)
        if slices > 2:
            self.refuse(e, "a subscript with more than two slices")
        return f"v_{name}[{', '.join(texts)}]", (F, V, V2)[slices]

    def call(self, e):
        f = e.func
        args = [self.expr(a) for a in e.args]
        if isinstance(f, ast.Attribute):
            if f.attr == "outer":
                self.refuse(e, "np.outer where a number is wanted")
            if f.attr == "dot":
                if args[0][1] != V or args[1][1] != V:
                    self.refuse(e, "np.dot of other than two 1-D arrays")
                return f"_dot_np({args[0][0]}, {args[1][0]}, _fp, _s1, _s2)", F
            (t, ty), = args
            if ty[0] not in ("i", "f"):
                self.refuse(e, f"np.{f.attr} of an array")
            if f.attr == "sqrt":
                self.to_float(e, ty)
                return f"np.sqrt(np.float64({t}))", F
            return f"abs({t})", ty
        for _, ty in args:
            if ty[0] not in ("i", "f"):
                self.refuse(e, f"{f.id}() of an array")
        if f.id == "abs":
            return f"abs({args[0][0]})", args[0][1]
        (a, at), (b, bt) = args
        if at[0] == "i" and bt[0] == "i":
            ty = _i(max(at[1], bt[1]))
        else:
            self.to_float(e, at)
            self.to_float(e, bt)
            ty = F
        cmp = "<" if f.id == "min" else ">"
        return f"({b} if {b} {cmp} {a} else {a})", ty

    def test(self, e) -> str:
        if isinstance(e, ast.BoolOp):
            word = " and " if isinstance(e.op, ast.And) else " or "
            return "(" + word.join(self.test(v) for v in e.values) + ")"
        if isinstance(e, ast.UnaryOp):
            return f"(not {self.test(e.operand)})"
        parts = [self.expr(e.left)] + [self.expr(c) for c in e.comparators]
        types = {t[0] for _, t in parts}
        if not types <= {"i", "f"}:
            self.refuse(e, "a comparison of arrays")
        if "f" in types:
            for _, t in parts:
                self.to_float(e, t)
        out = parts[0][0]
        for op, (text, _) in zip(e.ops, parts[1:]):
            out += f" {_CMP[type(op)]} {text}"
        return f"({out})"


_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _is_shape(e) -> bool:
    return (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape"
            and isinstance(e.value.value, ast.Name))


def render(site: Site, sig: tuple) -> str:
    """The loop's module text for argument types ``sig`` (see the module doc); :class:`Refused`."""
    r = _Render(site, sig)
    r.stmt(site.loop, 1)
    params = ", ".join([f"v_{p}" for p in site.params] + ["_fp", "_fg", "_w", "_E", "_S"])
    ne = 3 + sum(kind == "E" for _, kind in r.buffers)
    ns = sum(kind == "S" for _, kind in r.buffers)
    head = [f"def loop({params}):"]
    helpers = [f"# flamefuse compiled loop, renderer {VERSION}: {site.function}, line {site.line}",
               f"# buffers: {ne} {ns}"] + [h + "\n\n" for h in r.helpers]
    offset, parts = "0", []
    for name, kind in [("_s0", "E"), ("_s1", "E"), ("_s2", "E")] + r.buffers:
        parts.append(f"    {name} = _w[{offset}:{offset} + _{kind}]")
        offset = f"{offset} + _{kind}"
    return "\n".join(helpers + head + parts + r.lines + ["    return 0", ""])
