"""Which ``for ... in range(...)`` loops of a script may be compiled: a static, conservative check.

``sites(tree) -> list[Site]``: every ``for`` loop over ``range(...)`` in a function body of the
module ``tree`` (methods and nested functions too; module-level loops are checked by
:func:`module_sites`, whose names are globals; not in a class body, not in a function or
class with a decorator other than ``staticmethod``, ``classmethod``, ``property`` and its
``setter``, ``functools.wraps``: ``numba.njit`` or a tracer would meet the guard's call), outermost first: a loop
that qualifies is one site and its inner loops are part of it; one that does not is a refused
site (its reason kept for ``--explain``) and the loops inside it are looked at in turn.

A loop qualifies when (each rule's reason is the refusal's text):

* its statements are assignments (``=``, one target) and augmented assignments (``+= -= *=
  /=``) to a plain local name or to a subscript of a name, ``for`` loops over ``range`` (no
  ``else``), ``if``/``elif``/``else`` and ``pass``; no ``break``, ``continue``, ``return``,
  ``while``, ``try``, ``with``, ``del``, calls as statements, ``global``/``nonlocal``;
* its expressions are names, int and float literals, ``+ - * /``, unary ``-``/``+``,
  comparisons and ``and``/``or``/``not`` (in ``if`` tests only), subscripts of names whose
  indices are expressions or slices (a slice's step an int literal other than 0; a read may
  add ``None`` axes, a target may not), ``X.shape[k]`` (``k`` a literal), and the calls
  ``np.sqrt(x)``, ``abs(x)``, ``np.abs(x)``, ``min(a, b)``, ``max(a, b)``, ``np.dot(u, v)``,
  ``np.outer(u, v)`` and ``u @ v`` (``np`` the module the script imported NumPy as, never
  assigned elsewhere; no keywords, no ``*args``; the operands of dots and ``np.outer`` names
  or subscripts of names);
* a name used as an array (subscripted, ``.shape``, an operand of a dot) and assigned in the
  loop is a local array (``f = a[k + 1:, k] / a[k, k]``): assigned with ``=`` only, before its
  first use in each iteration, never written through a subscript (render checks that its value
  is a computed 1-D array); a loop variable is not assigned otherwise and not read outside its
  own loop;
* no name assigned in the loop (loop variables included) is used anywhere else in the
  enclosing function outside the loop (its value after the loop is then never needed, so the
  compiled loop need not give it back), nor in a nested function, lambda or comprehension; a
  read in the body of another ``for`` loop over the same name (which does not contain this
  one: gauss's ``for k`` twice) reads that loop's own value, and does not count;
  the function calls none of ``locals``, ``vars``, ``eval``, ``exec``, ``globals``, ``dir``;
* inside another loop of the function (a ``while``, a ``for`` that is not compiled), no name it
  assigns is read on entry (it would carry from one run of the loop to the next).

The site records what the rewritten code passes to its guard: ``params`` (the names read in the
loop that need their value on entry: every name not assigned in the loop, and those assigned in
it that may be read before their first assignment; in order of first use), ``arrays`` and
``written`` (names used as arrays, and those written through a subscript), ``funcs`` (the names
of the module and built-ins the loop calls, checked at run time to be NumPy's and Python's).
Types are not known here: :mod:`flamefuse.loops.render` infers them per call's argument types
and may refuse a site for one signature (a subscript whose index count is not the array's rank,
an int expression that could exceed 62 bits, ...).
"""
from __future__ import annotations

import ast

from flamefuse.loops.site import RESERVED, ModuleScope, Site

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
CMPOPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
NP_CALLS = {"sqrt": 1, "abs": 1, "dot": 2, "outer": 2}
BUILTIN_CALLS = {"abs": 1, "min": 2, "max": 2}
FORBIDDEN_CALLS = {"locals", "vars", "eval", "exec", "globals", "dir"}


class Refused(Exception):
    """A loop does not qualify (the message says why, with a line number)."""


def _is_range_loop(node) -> bool:
    return (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range")


def numpy_names(tree: ast.Module) -> set:
    """The names the module binds NumPy to (``import numpy as np``, ``import numpy``) and never
    rebinds anywhere (any other assignment, import, ``def`` or ``global`` of the name)."""
    bound, other = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                (bound if a.name == "numpy" else other).add(name)
        elif isinstance(node, ast.ImportFrom):
            other.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            other.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            other.update(node.names)
    return bound - other


def module_bound(tree: ast.Module) -> set:
    """Every name the module binds anywhere (a built-in shadowed by one is not the built-in)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return out


PLAIN_DECORATORS = {"staticmethod", "classmethod", "property", "setter", "getter", "deleter", "wraps"}


def _plain_decorator(d) -> bool:
    """A decorator that runs the function's code as written (``staticmethod``, ``property``...)."""
    if isinstance(d, ast.Call):
        d = d.func
    name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None)
    return name in PLAIN_DECORATORS


def _decorated(tree) -> set:
    """The ids of the functions defined in (or as) a function or class with another decorator
    (``numba.njit``, ``jitclass``, a tracer): it may compile or inspect the code as written,
    where the guard's call would break it."""
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and not all(_plain_decorator(d) for d in node.decorator_list)):
            out.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return out


def sites(tree: ast.Module) -> list[Site]:
    """The loop sites of ``tree`` (see the module doc), in source order."""
    nps = numpy_names(tree)
    shadowed = module_bound(tree)
    decorated = _decorated(tree)
    out: list[Site] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _function(node, nps, shadowed, out, id(node) in decorated)
    module_sites(tree, nps, shadowed, out)
    out.sort(key=lambda s: (s.line, s.loop.col_offset))
    for k, s in enumerate(out):
        s.index = k
        s.fixed = s.reason is None and fixed_slices(s.loop)
    return out


def fixed_slices(loop: ast.For) -> bool:
    """Whether the nest ``loop`` takes views (subscripts with a slice) and none of them uses one
    of its loop variables (``A[1:-1, :-2]``, not ``A[k + 1:, k]`` nor ``A[r, q, :]``; an element
    ``fict[t]`` may): every iteration works on the same whole-array views (a Jacobi or FDTD time
    step), which runtime fusion runs as one reused plan, in parallel, better than the compiled
    loop's one thread (:func:`flamefuse.loops.guard.run` leaves such a site to it where its
    arrays are large, lazy ones)."""
    variables = {n.target.id for n in ast.walk(loop) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}
    views = [n.slice for n in ast.walk(loop) if isinstance(n, ast.Subscript)
             and any(isinstance(x, ast.Slice) for x in ast.walk(n.slice))]
    return bool(views) and not any(isinstance(n, ast.Name) and n.id in variables
                                   for v in views for n in ast.walk(v))


def _own_statements(body):
    """The statement lists of a function body, not entering nested functions or classes."""
    for st in body:
        yield st
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(st, name, []) or [])
        for h in getattr(st, "handlers", []) or []:
            yield from _own_statements(h.body)
        for c in getattr(st, "cases", []) or []:
            yield from _own_statements(c.body)


def _function(fn, nps, shadowed, out, decorated=False) -> None:
    forbidden = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in FORBIDDEN_CALLS
                    for n in ast.walk(fn))
    declared = {name for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    is_async = isinstance(fn, ast.AsyncFunctionDef)

    def visit(body, in_loop=False):
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if _is_range_loop(st):
                site = Site(0, fn.name, st.lineno, st)
                try:
                    if is_async:
                        raise Refused("a loop in an async function")
                    if decorated:
                        raise Refused("a loop in a decorated function (the decorator may compile or inspect "
                                      "its code: only staticmethod, classmethod, property, wraps are known)")
                    if forbidden:
                        raise Refused(f"the function calls one of {', '.join(sorted(FORBIDDEN_CALLS))}")
                    _check(site, fn, nps, shadowed, declared, in_loop)
                    out.append(site)
                    continue
                except Refused as err:
                    site.reason = str(err)
                    out.append(site)
            inner = in_loop or isinstance(st, (ast.For, ast.AsyncFor, ast.While))
            for name in ("body", "orelse", "finalbody"):
                visit(getattr(st, name, []) or [], inner)
            for h in getattr(st, "handlers", []) or []:
                visit(h.body, inner)
    visit(fn.body)


class _Loop:
    """The walk of one candidate loop: collects names and raises :class:`Refused`."""

    def __init__(self, nps, shadowed):
        self.nps, self.shadowed = nps, shadowed
        self.assigned, self.loopvars, self.arrays, self.written = set(), set(), set(), set()
        self.augmented: set = set()     # names updated by an augmented assignment
        self.funcs, self.np_name, self.active = [], None, []
        self.needs: list = []       # names read that may be unassigned there (entry values)

    def refuse(self, node, what):
        raise Refused(f"line {getattr(node, 'lineno', '?')}: {what}")

    # -- statements (defined: the names certainly assigned at this point, this entry excluded)
    def block(self, body, defined: set) -> set:
        for st in body:
            defined = self.stmt(st, defined)
        return defined

    def stmt(self, st, defined: set) -> set:
        if isinstance(st, ast.Pass):
            return defined
        if isinstance(st, ast.Assign):
            if len(st.targets) != 1:
                self.refuse(st, "a chained assignment")
            self.expr(st.value, defined)
            return self.target(st.targets[0], defined, aug=False)
        if isinstance(st, ast.AugAssign):
            if type(st.op) not in BINOPS:
                self.refuse(st, f"the augmented assignment {type(st.op).__name__}")
            self.expr(st.value, defined)
            if isinstance(st.target, ast.Name):
                self.read(st.target.id, st.target, defined)
                self.augmented.add(st.target.id)
            return self.target(st.target, defined, aug=True)
        if isinstance(st, ast.For):
            if not _is_range_loop(st):
                self.refuse(st, "a for loop over something other than range()")
            if st.orelse:
                self.refuse(st, "a for loop with an else clause")
            call = st.iter
            if call.keywords or not 1 <= len(call.args) <= 3 or any(isinstance(a, ast.Starred) for a in call.args):
                self.refuse(st, "range() with other than 1-3 plain arguments")
            if len(call.args) == 3 and not _nonzero_int_literal(call.args[2]):
                self.refuse(st, "range() with a step other than a nonzero int literal")
            self.func("range", call.func)
            for a in call.args:
                self.expr(a, defined)
            if not isinstance(st.target, ast.Name):
                self.refuse(st, "a loop target other than a name")
            v = st.target.id
            if v in self.active or (v in self.assigned and v not in self.loopvars) or v in self.arrays:
                self.refuse(st, f"the loop variable {v} is assigned elsewhere in the loop")
            self.loopvars.add(v)
            self.assigned.add(v)
            self.active.append(v)
            self.block(st.body, defined | {v})
            self.active.pop()
            return defined
        if isinstance(st, ast.If):
            self.test(st.test, defined)
            a = self.block(st.body, defined)
            b = self.block(st.orelse, defined)
            return a & b
        self.refuse(st, f"the statement {type(st).__name__}")

    def target(self, t, defined: set, aug: bool) -> set:
        if isinstance(t, ast.Name):
            if t.id in self.loopvars:
                self.refuse(t, f"the loop variable {t.id} is assigned in the loop")
            self.assigned.add(t.id)
            return defined | {t.id}
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            self.array(t.value.id, t.value, defined)
            self.written.add(t.value.id)
            self.index(t.slice, defined, target=True)
            return defined
        self.refuse(t, "an assignment to something other than a name or a subscript of a name")

    # -- expressions
    def read(self, name, node, defined):
        if name in self.nps:
            self.refuse(node, f"the module {name} used as a value")
        if name in self.loopvars and name not in defined:
            self.refuse(node, f"the loop variable {name} is read outside its loop")
        if name not in defined and name not in self.needs:
            self.needs.append(name)

    def array(self, name, node, defined):
        if name in self.loopvars:
            self.refuse(node, f"the loop variable {name} is used as an array")
        self.arrays.add(name)
        self.read(name, node, defined)

    def func(self, name, node):
        if name in self.shadowed and name not in self.nps:
            self.refuse(node, f"{name} is rebound by the script")
        if name not in self.funcs:
            self.funcs.append(name)

    def test(self, e, defined):
        if isinstance(e, ast.BoolOp):
            for v in e.values:
                self.test(v, defined)
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            self.test(e.operand, defined)
        elif isinstance(e, ast.Compare):
            if not all(isinstance(op, CMPOPS) for op in e.ops):
                self.refuse(e, "a comparison other than < <= > >= == !=")
            self.expr(e.left, defined)
            for c in e.comparators:
                self.expr(c, defined)
        else:
            self.refuse(e, "an if test that is not a comparison")

    def index(self, s, defined, target=False):
        parts = s.elts if isinstance(s, ast.Tuple) else [s]
        for p in parts:
            if not target and isinstance(p, ast.Constant) and p.value is None:
                continue        # (a new axis of a view read: broadcasting)
            if isinstance(p, ast.Slice):
                for b in (p.lower, p.upper):
                    if b is not None:
                        self.expr(b, defined)
                if p.step is not None and not _nonzero_int_literal(p.step):
                    self.refuse(p, "a slice step other than a nonzero int literal")
            elif isinstance(p, (ast.Starred,)) or (isinstance(p, ast.Constant) and p.value in (None, Ellipsis)):
                self.refuse(p, "an index of None, ... or *")
            else:
                self.expr(p, defined)

    def expr(self, e, defined):
        if isinstance(e, ast.Name):
            if e.id in self.nps:
                self.refuse(e, f"the module {e.id} used as a value")
            self.read(e.id, e, defined)
        elif isinstance(e, ast.Constant):
            if type(e.value) not in (int, float):
                self.refuse(e, f"the constant {e.value!r}")
        elif isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.MatMult):
                self.operand(e.left, defined)
                self.operand(e.right, defined)
                return
            if type(e.op) not in BINOPS:
                self.refuse(e, f"the operator {type(e.op).__name__} (only + - * / and @)")
            self.expr(e.left, defined)
            self.expr(e.right, defined)
        elif isinstance(e, ast.UnaryOp):
            if not isinstance(e.op, (ast.USub, ast.UAdd)):
                self.refuse(e, f"the operator {type(e.op).__name__}")
            self.expr(e.operand, defined)
        elif isinstance(e, ast.Subscript):
            if _is_shape(e):
                self.array(e.value.value.id, e.value.value, defined)
                return
            if not isinstance(e.value, ast.Name):
                self.refuse(e, "a subscript of something other than a name")
            self.array(e.value.id, e.value, defined)
            self.index(e.slice, defined)
        elif isinstance(e, ast.Call):
            self.call(e, defined)
        else:
            self.refuse(e, f"the expression {type(e).__name__}")

    def operand(self, e, defined):
        """An operand of a dot product: a subscript of an array or an array's name."""
        if isinstance(e, ast.Name):
            self.array(e.id, e, defined)
        elif isinstance(e, ast.Subscript) and not _is_shape(e):
            self.expr(e, defined)
        else:
            self.refuse(e, "a dot product of something other than arrays or their slices")

    def call(self, e, defined):
        if e.keywords or any(isinstance(a, ast.Starred) for a in e.args):
            self.refuse(e, "a call with keywords or *args")
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in self.nps:
            if NP_CALLS.get(f.attr) != len(e.args):
                self.refuse(e, f"the call {f.value.id}.{f.attr} (only np.sqrt, np.abs, np.dot, np.outer)")
            self.np_name = f.value.id
            self.func(f.value.id, f.value)
            if f.attr in ("dot", "outer"):
                for a in e.args:
                    self.operand(a, defined)
                return
        elif isinstance(f, ast.Name) and BUILTIN_CALLS.get(f.id) == len(e.args):
            self.func(f.id, f)
        else:
            self.refuse(e, f"the call {ast.unparse(f)}() (only np.sqrt, abs, np.abs, min, max of two, np.dot, np.outer)")
        for a in e.args:
            self.expr(a, defined)


def _is_shape(e) -> bool:
    return (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape"
            and isinstance(e.value.value, ast.Name) and isinstance(e.slice, ast.Constant)
            and type(e.slice.value) is int)


def _nonzero_int_literal(e) -> bool:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e = e.operand
    return isinstance(e, ast.Constant) and type(e.value) is int and e.value != 0


def _check(site: Site, fn, nps, shadowed, declared, in_loop=False) -> None:
    loop = _Loop(nps, shadowed)
    loop.stmt(site.loop, set())
    carried = [n for n in loop.needs if n in loop.assigned]
    if carried and in_loop:     # its value after this run is the next run's value on entry
        raise Refused(f"{carried[0]} is read on entry and assigned, and the loop is inside another loop")
    if declared & (loop.assigned | loop.arrays):
        raise Refused("a name of the loop is declared global or nonlocal")
    for name in sorted(loop.assigned & loop.arrays):      # a local array: f = a[k + 1:, k] / a[k, k]
        if name in loop.written or name in loop.augmented or name in loop.needs:
            raise Refused(f"{name} is used as an array and assigned (only a computed array assigned before "
                          f"its use in each iteration, never written through a subscript)")
    early = [n for n in loop.needs if n in loop.loopvars]
    if early:
        raise Refused(f"the loop variable {early[0]} is read where its loop has not set it")
    inside = {id(n) for n in ast.walk(site.loop)}
    rebound = _rebound_by_loops(fn, site.loop)
    for n in ast.walk(fn):
        if id(n) in inside:
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store) and id(n) in rebound.get(n.id, ()) \
                and not _in_nested(fn, n):
            continue
        if isinstance(n, ast.Name) and n.id in loop.assigned and (
                not isinstance(n.ctx, ast.Store) or _in_nested(fn, n)):
            raise Refused(f"{n.id}, assigned in the loop, is used outside it (line {n.lineno})")
        if isinstance(n, ast.arg) and n.arg in loop.assigned and _in_nested(fn, n):
            raise Refused(f"{n.arg}, assigned in the loop, is a parameter of a nested function")
    site.params = [n for n in loop.needs if n not in nps]
    site.arrays, site.written, site.funcs = loop.arrays, loop.written, loop.funcs
    site.numpy_name = loop.np_name or "np"
    if not loop.written:
        raise Refused("the loop writes no array (nothing it computes would be kept)")


def _rebound_by_loops(fn, site_loop) -> dict:
    """name -> the ids of the nodes in the body of another ``for name in ...`` loop of ``fn`` that
    does not contain ``site_loop``: a read of ``name`` there sees that loop's own value (it is
    assigned at the start of every iteration), never the value the site's loop left."""
    out: dict = {}
    for node in ast.walk(fn):
        if (isinstance(node, ast.For) and node is not site_loop and isinstance(node.target, ast.Name)
                and not any(n is site_loop for n in ast.walk(node))):
            ids = out.setdefault(node.target.id, set())
            for st in node.body:
                ids.update(id(n) for n in ast.walk(st))
    return out


def _in_nested(fn, target) -> bool:
    """Is ``target`` (a node of ``fn``) inside a nested function, lambda, class or comprehension?"""
    def walk(node, nested):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                                 ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
            if child is target:
                return inner
            found = walk(child, inner)
            if found is not None:
                return found
        return None
    return bool(walk(fn, False))


# -- module-level loops (scope: the names are the module's globals) ----------------------------

_GUARDING = (ast.Try, ast.With, ast.AsyncWith) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def module_sites(tree: ast.Module, nps, shadowed, out: list) -> None:
    """Append the loop sites at module level (in ``if __name__ == "__main__":``, in a loop that
    is not compiled, ... but not in a function or class body) to ``out``, each accepted by
    :func:`_check_module` or refused with its reason; loops in class bodies are refused."""
    dynamic = sorted({n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name) and n.func.id in ("exec", "eval")})
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    declared: set = set()
    for st in _own_statements(tree.body):
        if isinstance(st, (ast.Global, ast.Nonlocal)):
            declared.update(st.names)

    def visit(body, guarded, where):
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if _is_range_loop(st):
                site = Site(0, where, st.lineno, st)
                try:
                    if where != "<module>":
                        raise Refused("a loop in a class body (its names are the class's)")
                    if dynamic:
                        raise Refused(f"the script calls {' and '.join(dynamic)} (names may be bound where "
                                      "this check cannot see)")
                    _check_module(site, nps, shadowed, declared, used, guarded)
                    out.append(site)
                    continue
                except Refused as err:
                    site.reason = str(err)
                    out.append(site)
            inner = guarded or isinstance(st, _GUARDING)
            for name in ("body", "orelse", "finalbody"):
                visit(getattr(st, name, []) or [], inner, where)
            for h in getattr(st, "handlers", []) or []:
                visit(h.body, inner, where)
            for c in getattr(st, "cases", []) or []:
                visit(c.body, inner, where)
    visit(tree.body, False, "<module>")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            visit(node.body, False, f"<class {node.name}>")


def _check_module(site: Site, nps, shadowed, declared, used, guarded) -> None:
    """A module-level loop qualifies as a function's does (:class:`_Loop`), except that its names
    are globals, which code after it (or a function called later) may read: every name it
    assigns must get the value Python would leave. Loop variables get theirs from their
    ``range`` s (the guard recomputes them), so an inner loop's ``range`` may read only names
    the loop does not assign and the variables of the loops around it, and the loop may not be
    under an ``if`` or share its variable with another loop; every other name it assigns must
    be assigned on every run of some loop's body (its witness) and not read before (the last
    outer iteration runs as written and sets it), and then the loop may not be inside a
    ``try`` or ``with`` (an exception in that iteration would show earlier values)."""
    loop = _Loop(nps, shadowed)
    loop.stmt(site.loop, set())
    early = [n for n in loop.needs if n in loop.loopvars]
    if early:
        raise Refused(f"the loop variable {early[0]} is read where its loop has not set it")
    if declared & (loop.assigned | loop.arrays):
        raise Refused("a name of the loop is declared global at module level")
    taken = sorted(used & set(RESERVED))
    if taken:
        raise Refused(f"the script uses the name {taken[0]}")
    carried = [n for n in loop.needs if n in loop.assigned]
    if carried:
        raise Refused(f"{carried[0]}, a module global, is read on entry and assigned (its value after each "
                      "iteration is not handed back)")
    chains, witnesses = _scope(site.loop, loop.assigned)
    others = sorted(loop.assigned - loop.loopvars)
    for x in others:
        if x not in witnesses:
            raise Refused(f"{x}, a module global, is assigned only under an if (its final value is not known)")
    if others and guarded:
        raise Refused(f"{others[0]}, a module global, is assigned in a loop inside try or with (the loop's last "
                      "iteration runs as written; an exception there would show earlier values)")
    site.params = [n for n in loop.needs if n not in nps]
    site.arrays, site.written, site.funcs = loop.arrays, loop.written, loop.funcs
    site.numpy_name = loop.np_name or "np"
    if not loop.written:
        raise Refused("the loop writes no array (nothing it computes would be kept)")
    site.module = ModuleScope(chains, {x: witnesses[x] for x in others})


def _definite(body) -> set:
    """The names a run of ``body`` assigns on every path (an inner loop may run zero times)."""
    out: set = set()
    for st in body:
        if isinstance(st, (ast.Assign, ast.AugAssign)):
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                if isinstance(t, ast.Name):
                    out.add(t.id)
        elif isinstance(st, ast.If):
            out |= _definite(st.body) & _definite(st.orelse)
    return out


def _scope(outer: ast.For, assigned: set) -> tuple[dict, dict]:
    """``(chains, witnesses)`` of :class:`ModuleScope` for the loop ``outer``; :class:`Refused`."""
    chains: dict = {}
    witnesses: dict = {}

    def visit_for(node, chain, conditional):
        v = node.target.id
        if v in chains:
            raise Refused(f"line {node.lineno}: the loop variable {v} is bound by two loops (a module "
                          "global: its final value must be known)")
        if conditional:
            raise Refused(f"line {node.lineno}: the loop over {v} is under an if (a module global: its "
                          "final value is not known)")
        src = None
        if chain:
            around = {c for c, _ in chain}
            for n in ast.walk(node.iter):
                if isinstance(n, ast.Name) and n.id in assigned and n.id not in around:
                    raise Refused(f"line {node.lineno}: the range of {v} reads {n.id}, which the loop assigns")
            src = "(" + "".join(ast.unparse(a) + ", " for a in node.iter.args) + ")"
        chain = chain + [(v, src)]
        chains[v] = chain
        for x in sorted(_definite(node.body)):
            witnesses.setdefault(x, v)
        for st in node.body:
            visit(st, chain, False)

    def visit(st, chain, conditional):
        if isinstance(st, ast.For):
            visit_for(st, chain, conditional)
        elif isinstance(st, ast.If):
            for s in st.body + st.orelse:
                visit(s, chain, True)
    visit_for(outer, [], False)
    return chains, witnesses
