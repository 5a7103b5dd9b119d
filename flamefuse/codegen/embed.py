"""Real modules copied into one module's text, from their source: a generated module's fixed part.

``bundle(modules, ours="flamefuse") -> str`` is the top-level statements of
each module of ``modules`` (all but its docstring), preceded by what they
import from other modules of the package ``ours``, taken from those modules'
source: there, only the statements that define the imported names and,
transitively, the names these use (and so on down).  Imports of anything else
are gathered at the top, once each, sorted (``__future__``, the standard
library, the others); imports from ``ours`` are left out, as their names are
now defined in the same text.  Each module's part starts with a comment
``# ---- copied from <module>`` (naming the imported names where only they and
what they use were copied); a statement keeps the comment lines above it;
definitions are two blank lines apart.  The text depends only on the sources
(read from the files, not imported), so it is deterministic.

``top_level_names(text) -> frozenset`` is the names a module's text binds at
its top level.

``ValueError`` where a copy would not mean what the modules mean: two parts
define one name, a name imported from ``ours`` is not defined at the top level
of its module or is renamed (``as``), an import from ``ours`` is relative, a
plain ``import ours...`` or inside a function, or the modules import each
other.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

_OURS = "flamefuse"
_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


@dataclass(frozen=True)
class _Stmt:
    text: str                   # its source, with the comment lines above it
    defines: frozenset          # the top-level names it binds
    uses: frozenset             # every name it reads
    block: bool                 # a def or class
    links: tuple = ()           # an import from our package: (module, names)
    external: str = ""          # another import: its text


def _defined(node) -> set:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    found, todo = set(), [node]
    while todo:                     # the names stored in this scope (not a comprehension's own)
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            found |= {a.asname or a.name.split(".")[0] for a in n.names}
        elif not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return found


def top_level_names(text: str) -> frozenset:
    """The names the top-level statements of the module ``text`` bind."""
    return frozenset(name for node in ast.parse(text).body for name in _defined(node))


def _statements(module: str, ours: str) -> list[_Stmt]:
    """The top-level statements of ``module`` (its docstring left out)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"{module} has no Python source to copy")
    source = Path(spec.origin).read_text()
    lines, tree = source.splitlines(), ast.parse(source)
    body, end = tree.body, 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body, end = body[1:], body[0].end_lineno
    top = {id(node) for node in body}
    for node in ast.walk(tree):     # from ours: only `from ours.x import name` at the top level
        if isinstance(node, ast.ImportFrom) and node.level:
            raise ValueError(f"{module}: the relative import `{ast.unparse(node)}` cannot be copied")
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and id(node) not in top:
            names = [node.module]
        else:
            continue
        if any(n == ours or n.startswith(ours + ".") for n in names):
            raise ValueError(f"{module}: `{ast.unparse(node)}` cannot be copied (only a top-level "
                             f"`from {ours}.x import name` can)")
    out = []
    for node in body:
        text = "\n".join(lines[end:node.end_lineno]).strip("\n")
        end = node.end_lineno
        uses = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        stmt = dict(text=text, defines=frozenset(_defined(node)), uses=uses,
                    block=isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] == ours:
            renamed = [a.name for a in node.names if a.asname]
            if renamed:
                raise ValueError(f"{module}: renamed imports cannot be copied ({', '.join(renamed)})")
            stmt["links"] = (node.module, tuple(a.name for a in node.names))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stmt["external"] = ast.unparse(node)
        out.append(_Stmt(**stmt))
    return out


def _select(stmts: list[_Stmt], roots) -> list[_Stmt]:
    """``stmts`` (``roots`` None) or those that define ``roots`` and what they use, in source order
    (with any ``from __future__`` import)."""
    if roots is None:
        return list(stmts)
    by_name: dict[str, list[int]] = {}
    for k, s in enumerate(stmts):
        for name in s.defines:
            by_name.setdefault(name, []).append(k)
    chosen = {k for k, s in enumerate(stmts) if s.external.startswith("from __future__ ")}
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            for k in set(by_name.get(name, ())) - chosen:
                chosen.add(k)
                todo.extend(stmts[k].uses | stmts[k].defines)
    return [s for k, s in enumerate(stmts) if k in chosen]


def _parts(modules: list[str], ours: str) -> list[tuple[str, set | None, list[_Stmt]]]:
    """(module, roots (None: whole), its chosen statements), the dependencies first."""
    roots: dict[str, set | None] = {m: None for m in modules}
    chosen: dict[str, list[_Stmt]] = {}
    changed = True
    while changed:                  # until every name imported from a copied module is copied
        changed = False
        for module in list(roots):
            chosen[module] = _select(_statements(module, ours), roots[module])
            for dep, names in (s.links for s in chosen[module] if s.links):
                if dep not in roots or roots[dep] is not None and not set(names) <= roots[dep]:
                    roots[dep] = set(names) | (roots.get(dep) or set())
                    changed = True
    for module, stmts in chosen.items():
        for dep, names in (s.links for s in stmts if s.links):
            missing = set(names) - {n for t in chosen[dep] if not t.links and not t.external for n in t.defines}
            if missing:
                raise ValueError(f"{module} imports {', '.join(sorted(missing))} from {dep}, "
                                 "which does not define them at its top level")
    order: list[str] = []

    def visit(module, path):
        if module in path:
            raise ValueError(f"the modules import each other: {' -> '.join(path + (module,))}")
        if module not in order:
            for s in chosen[module]:
                if s.links:
                    visit(s.links[0], path + (module,))
            order.append(module)

    for module in modules:
        visit(module, ())
    return [(m, roots[m], chosen[m]) for m in order]


def _import_key(text: str) -> tuple:
    """Future, standard library, others; in each, ``import x`` before ``from x import y``."""
    root = text.split()[1].split(".")[0]
    return (root != "__future__", root not in sys.stdlib_module_names, text.startswith("from "), text)


def bundle(modules, ours: str = _OURS) -> str:
    """The text of ``modules`` and what they import from the package ``ours`` (see the module doc)."""
    parts = _parts(list(modules), ours)
    imports, owner = set(), {}
    for module, _, stmts in parts:
        for s in (s for s in stmts if not s.links):
            imports |= {s.external} - {""}
            for name in s.defines:
                first = owner.setdefault(name, (module, s.external))
                if first != (module, s.external) and not (s.external and first[1] == s.external):
                    raise ValueError(f"{name} is defined by both {first[0]} and {module}: "
                                     "one name for two things once copied into one module")
    groups: dict[tuple, list[str]] = {}
    for text in sorted(imports, key=_import_key):
        groups.setdefault(_import_key(text)[:2], []).append(text)
    text = "\n\n".join("\n".join(g) for g in groups.values())
    for module, roots, stmts in parts:
        what = f" ({', '.join(sorted(roots))} and what {'they use' if len(roots) > 1 else 'it uses'})" \
            if roots is not None else ""
        text += ("\n\n\n" if text else "") + f"# ---- copied from {module}{what}"
        previous = None
        for s in (s for s in stmts if not s.links and not s.external):
            text += ("\n\n\n" if previous is None or previous.block or s.block else "\n") + s.text
            previous = s
    return text + "\n"
