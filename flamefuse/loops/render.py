"""A loop site rendered as a Numba function for one signature of its arguments.

``render(site, sig) -> str`` gives the text of a module defining ``loop(<params>, _fp, _s0,
_s1, _s2)``: the site's loop as written, with every name of the script prefixed ``v_`` (so no
script name meets one of ours), for the argument types ``sig`` (one code per parameter:
``'i'`` an int, ``'f'`` a float, ``'a<n>'`` an n-D float64 array). It raises
:class:`~flamefuse.loops.extract.Refused` when the loop cannot be compiled exactly for those types.

Types are inferred statement by statement: an int (with a bound on its bits: a parameter,
``X.shape[k]`` 31, a literal its own, ``+ -`` one more than the larger, ``*`` the sum; a loop
variable the larger of its range's bounds), a float, a bool (comparisons, in ``if`` tests only),
an array of rank n, or a 1-D view (a subscript with one slice). Refused: an int that could
exceed 62 bits (Python's ints do not overflow, int64 would), an int of more than 53 bits where it
becomes a float (Python converts exactly rounded; so does the compiled code only below 2**53), a
local int assigned more than once or carried from one iteration to the next, a float variable
whose value on entry is an int, a subscript whose index count is not the array's rank or that
has more than one slice, arithmetic on a whole array.

What is rendered differently from the source, and why it is NumPy's result:

* ``np.dot(u, v)`` and ``u @ v`` of 1-D views call ``_dot_np`` and ``_dot_mm``
  (:mod:`flamefuse.loops.numba_parts`): NumPy's own choice of BLAS or loop, NumPy's own ddot.
* A scalar ``a / b`` is ``_div(a, b)``, which raises (the loop then runs as written) where ``b``
  is zero: Python raises ``ZeroDivisionError`` for Python floats and ints even where IEEE
  raises no flag (``nan / 0.0``).
* Every value a statement computes, and every ``if`` test, is passed to ``_keep``: LLVM would
  otherwise drop a computation whose result is never used (a local overwritten before it is
  read, an element stored twice) and with it the floating-point flag NumPy warns about.
* ``min(a, b)`` / ``max(a, b)`` are ``(b if b < a else a)`` / ``(b if b > a else a)``: Python's
  built-ins for two arguments (NaN included).
* A statement whose target is a 1-D view (``y[:k] += alpha * y[k - 1::-1]``) is two loops: the
  right-hand side element by element into the scratch buffer ``_s0`` (each element the same
  operations NumPy's ufuncs do, the scalar parts evaluated once before), then the target
  updated from it. NumPy evaluates the right side into a temporary before it writes (and copies
  an operand that overlaps the output), so overlapping views give NumPy's result. Operand
  lengths must equal the target's (else ``ValueError``: the loop then runs as written and NumPy
  broadcasts or raises as it does).
"""
from __future__ import annotations

import ast

from flamefuse.loops.extract import BINOPS, Refused, Site

VERSION = "2"       # in the rendered text: a change of the renderer rebuilds every loop library
INT_BITS = 62       # an int expression's bound
EXACT_BITS = 53     # ints converted to floats


def _i(bits):
    return ("i", bits)


F = ("f",)
B = ("b",)
V = ("v",)


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
            if name not in site.arrays and kind == "a":
                raise Refused(f"the array {name} is used as a scalar")
        self.lines: list = []
        self.count = 0

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

    def assign_subscript(self, target, op, value, depth):
        ttext, tt = self.subscript(target)
        if tt == F:
            text, t = self.expr(value)
            if t[0] not in ("i", "f"):
                self.refuse(value, "an array assigned to one element")
            self.to_float(value, t)
            self.emit(depth, f"{ttext} = {ttext} {op} ({text})" if op else f"{ttext} = {text}")
            self.emit(depth, f"_keep({ttext})")
            return
        # a 1-D view: element-wise, through the scratch buffer _s0
        binds: list = []
        etext, et = self.elementwise(value, binds)
        m = self.fresh("m")
        tv = self.fresh("t")
        self.emit(depth, f"{tv} = {ttext}")
        for name, text in binds:
            self.emit(depth, f"{name} = {text}")
            if name.startswith("_c"):
                self.emit(depth, f"_keep({name})")     # (computed even where the view is empty)
        for name, text in binds:
            if name.startswith("_e"):
                self.emit(depth, f"if {name}.shape[0] != {tv}.shape[0]:")
                self.emit(depth + 1, "raise ValueError('operands could not be broadcast')")
        self.emit(depth, f"for {m} in range({tv}.shape[0]):")
        self.emit(depth + 1, f"_s0[{m}] = {etext.replace('[_m]', f'[{m}]')}")
        self.emit(depth + 1, f"_keep(_s0[{m}])")
        self.emit(depth, f"for {m} in range({tv}.shape[0]):")
        self.emit(depth + 1, f"{tv}[{m}] = {tv}[{m}] {op} _s0[{m}]" if op else f"{tv}[{m}] = _s0[{m}]")

    def elementwise(self, e, binds):
        """``e`` per element ``_m`` of the views it reads (bound in ``binds``), its scalar parts
        evaluated once (bound too)."""
        if not self.has_view(e):
            text, t = self.expr(e)
            if t[0] not in ("i", "f"):
                self.refuse(e, "an array in an element-wise expression")
            self.to_float(e, t)
            name = self.fresh("c")
            binds.append((name, text))
            return name, F
        if isinstance(e, ast.BinOp) and type(e.op) in BINOPS:
            lt, _ = self.elementwise(e.left, binds)
            rt, _ = self.elementwise(e.right, binds)
            return f"({lt} {BINOPS[type(e.op)]} {rt})", F
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            t, _ = self.elementwise(e.operand, binds)
            return (f"(-{t})" if isinstance(e.op, ast.USub) else t), F
        text, t = self.expr(e)
        if t != V:
            self.refuse(e, "an element-wise expression other than + - * / of 1-D views and numbers")
        name = self.fresh("e")
        binds.append((name, text))
        return f"{name}[_m]", F

    def has_view(self, e) -> bool:
        if isinstance(e, ast.Subscript):
            return not _is_shape(e) and self.subscript(e)[1] == V
        if isinstance(e, ast.Name):
            return self.types.get(e.id, F)[0] == "a"
        if isinstance(e, ast.Call) or (isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult)):
            return False
        return any(self.has_view(c) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr))

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
        if slices > 1:
            self.refuse(e, "a subscript with more than one slice (a 2-D view)")
        return f"v_{name}[{', '.join(texts)}]", (V if slices else F)

    def call(self, e):
        f = e.func
        args = [self.expr(a) for a in e.args]
        if isinstance(f, ast.Attribute):
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
    params = ", ".join([f"v_{p}" for p in site.params] + ["_fp", "_s0", "_s1", "_s2"])
    head = [f"# flamefuse compiled loop, renderer {VERSION}: {site.function}, line {site.line}",
            f"def loop({params}):"]
    return "\n".join(head + r.lines + ["    return 0", ""])
