"""Worker expressions: the element function of a combinator.

A worker is a Python-syntax expression over numbers, the element names of
the combinator (its array arguments; ``i`` the index for ``generate``) and
the scalars listed in its ``{...}``.  Allowed: ``+ - * / **``, comparisons,
``and or not``, ``x if c else y``, and calls to ``min``, ``max``, ``abs``.

:func:`render` turns a worker into Python source twice over: element-wise
scalar code for the Numba loop, and whole-array NumPy code for the naive
evaluator.  :func:`default_worker` gives the documented defaults.
"""
from __future__ import annotations

import ast

from flamefuse.errors import fail

FUNCS = {"min": "np.minimum", "max": "np.maximum", "abs": "np.abs"}
ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp,
           ast.Call, ast.Name, ast.Constant, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.Div,
           ast.Pow, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or, ast.Lt, ast.LtE, ast.Gt,
           ast.GtE, ast.Eq, ast.NotEq)


def element_names(binding) -> tuple[str, ...]:
    """The names a worker of ``binding`` may use for the current element(s)."""
    if binding.kind == "generate":
        return ("i",)
    if binding.kind == "gather":
        return ()
    return tuple(dict.fromkeys(binding.arrays))


def default_worker(binding) -> str:
    scalars = list(binding.scalars)
    if binding.kind == "filter":
        return f"{binding.arrays[0]} > " + (" + ".join(scalars) if scalars else "0")
    if binding.kind == "cross":
        return f"{binding.arrays[0]} + {binding.arrays[1]}"
    return " + ".join(list(element_names(binding)) + scalars)


def worker_source(binding) -> str:
    return binding.worker if binding.worker is not None else default_worker(binding)


def parse(binding, file=None, col_offset=0) -> ast.Expression:
    """Parse and check the worker of ``binding``; errors point into the source."""
    text = worker_source(binding)
    where = dict(file=file, line=binding.line or None)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        fail(f"{binding.kind} {binding.name!r}: bad worker expression: {err.msg}",
             col=(col_offset + (err.offset or 1)) if binding.line else None, **where)
    allowed = set(element_names(binding)) | set(binding.scalars)
    if binding.kind == "cross" and binding.worker is not None \
            and binding.arrays[0] == binding.arrays[1]:
        fail(f"cross {binding.name!r} of an array with itself cannot name its elements",
             hint="bind a copy with map first", **where)
    for node in ast.walk(tree):
        col = (col_offset + getattr(node, "col_offset", 0) + 1) if binding.line else None
        if not isinstance(node, ALLOWED):
            fail(f"{binding.kind} {binding.name!r}: {type(node).__name__} is not allowed "
                 "in a worker", col=col, **where)
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name)
                                           or node.func.id not in FUNCS or node.keywords):
            fail(f"{binding.kind} {binding.name!r}: only min, max and abs may be called",
                 col=col, **where)
        if isinstance(node, ast.Call) and len(node.args) != 1 + (node.func.id != "abs") \
                and not (node.func.id != "abs" and len(node.args) > 2):
            fail(f"{binding.kind} {binding.name!r}: {node.func.id} takes "
                 + ("one argument" if node.func.id == "abs" else "two or more arguments"),
                 col=col, **where)
        if isinstance(node, ast.Name) and node.id not in allowed and node.id not in FUNCS:
            fail(f"{binding.kind} {binding.name!r}: worker uses {node.id!r}, which is not "
                 "one of its elements or listed scalars",
                 hint="list scalars in {...}; allowed names: " + ", ".join(sorted(allowed)),
                 col=col, **where)
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            fail(f"{binding.kind} {binding.name!r}: only numeric constants are allowed",
                 col=col, **where)
    return tree


class _Render(ast.NodeTransformer):
    def __init__(self, names: dict[str, str], vector: bool):
        self.names, self.vector = names, vector

    def visit_Name(self, node):
        return ast.Name(self.names.get(node.id, node.id), ast.Load())

    def visit_Call(self, node):
        self.generic_visit(node)
        if self.vector:
            mod, fn = FUNCS[node.func.id].split(".")
            func = ast.Attribute(ast.Name(mod, ast.Load()), fn, ast.Load())
            return ast.Call(func, node.args, [])
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not self.vector:
            return node
        fn = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        func = ast.Attribute(ast.Name("np", ast.Load()), fn, ast.Load())
        return _fold_calls(func, node.values)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if self.vector and isinstance(node.op, ast.Not):
            func = ast.Attribute(ast.Name("np", ast.Load()), "logical_not", ast.Load())
            return ast.Call(func, [node.operand], [])
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not self.vector:
            return node
        func = ast.Attribute(ast.Name("np", ast.Load()), "where", ast.Load())
        return ast.Call(func, [node.test, node.body, node.orelse], [])


def _fold_calls(func, values):
    out = values[0]
    for v in values[1:]:
        out = ast.Call(func, [out, v], [])
    return out


def render(tree: ast.Expression, names: dict[str, str], vector: bool) -> str:
    """Python source for ``tree`` with names renamed; NumPy ufuncs if ``vector``."""
    if vector:
        tree = _expand_minmax(tree)
    out = _Render(names, vector).visit(ast.fix_missing_locations(
        ast.Expression(ast.parse(ast.unparse(tree), mode="eval").body)))
    return "(" + ast.unparse(ast.fix_missing_locations(out)) + ")"


def _expand_minmax(tree):
    """Rewrite min/max with more than two arguments into nested two-argument calls
    (np.minimum and np.maximum take two operands)."""
    class Expand(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            while node.func.id in ("min", "max") and len(node.args) > 2:
                node = ast.Call(node.func, [ast.Call(node.func, node.args[:2], [])]
                                + node.args[2:], [])
            return node
    return Expand().visit(ast.parse(ast.unparse(tree), mode="eval"))


def check_workers(program) -> None:
    """Parse every worker of ``program`` (raising FlameError on a bad one)."""
    for b in program.bindings:
        if b.kind not in ("gather", "external"):
            parse(b, program.file)
