"""The script's code with its compilable loops guarded: ``compile_script(source, filename)``.

Each site :mod:`flamefuse.loops.extract` accepts is replaced, in place, by::

    try:
        _ff_loop_args = (<params>, <functions>)
    except NameError:               # a name the loop reads has no value: run it as written
        _ff_loop_args = None
    if not _flamefuse_loops(<index>, _ff_loop_args):
        <the loop, unchanged>
        _flamefuse_loops(-1 - <index>, None)     # its end (a timed run as written: guard)
    _ff_loop_args = None

``_flamefuse_loops`` is :func:`flamefuse.loops.guard.run`, put into the script's globals by
:func:`install`; the loop keeps its own line numbers, so a traceback from it reads as before.
A script that uses either name itself, or has no compilable site, is compiled unchanged.

A loop at module level, whose names are the module's globals, is written differently
(:func:`_module_replacement`, :mod:`flamefuse.loops.scope`): ``for i in _flamefuse_loops(<index>,
lambda: (<params>, <functions>), <its range as written>): <the body as written>`` then the end
mark; the guard returns what of the range is left to run as written.
:data:`flamefuse.loops.guard.SITES` holds the sites (refused ones too, for ``--explain``).
"""
from __future__ import annotations

import ast

from flamefuse.loops.extract import sites as find_sites

GLOBAL = "_flamefuse_loops"
LOCAL = "_ff_loop_args"


def _replacement(site) -> list:
    names = [*site.params, *site.funcs]
    text = (f"try:\n    {LOCAL} = ({', '.join(names)}{',' if len(names) == 1 else ''})\n"
            f"except NameError:\n    {LOCAL} = None\n"
            f"if not {GLOBAL}({site.index}, {LOCAL}):\n    pass\n    {GLOBAL}({-1 - site.index}, None)\n"
            f"{LOCAL} = None\n")
    body = ast.parse(text).body
    for node in body:
        for n in ast.walk(node):
            ast.copy_location(n, site.loop)
            n.end_lineno, n.end_col_offset = site.loop.lineno, site.loop.col_offset
    body[1].body[0] = site.loop
    return body


def _module_replacement(site) -> list:
    """A module-level site (:mod:`flamefuse.loops.scope`): the loop iterates over what the guard
    leaves of its range; no name of ours is bound in the module's globals."""
    names = [*site.params, *site.funcs]
    loop = site.loop
    call = ast.parse(f"{GLOBAL}({site.index}, lambda: ({', '.join(names)}{',' if len(names) == 1 else ''}), None)",
                     mode="eval").body
    end = ast.parse(f"{GLOBAL}({-1 - site.index}, None)").body[0]
    for node, at in ((call, loop.iter), (end, loop)):
        for n in ast.walk(node):
            ast.copy_location(n, at)
            n.end_lineno, n.end_col_offset = at.lineno, at.col_offset
    call.args[2] = loop.iter
    new = ast.copy_location(ast.For(target=loop.target, iter=call, body=loop.body, orelse=[]), loop)
    new.end_lineno, new.end_col_offset = loop.end_lineno, loop.end_col_offset
    return [new, end]


def _replace(tree, chosen: dict) -> None:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not any(id(s) in chosen for s in stmts):
                continue
            new = []
            for s in stmts:
                site = chosen.get(id(s))
                new.extend([s] if site is None else _module_replacement(site) if site.module else _replacement(site))
            setattr(node, field, new)


def compile_script(source: bytes | str, filename: str):
    """The code object of ``source`` with its loop sites guarded (SyntaxError as ``compile``);
    compiled with the script's own ``__future__`` imports only (``dont_inherit``: never this
    module's ``annotations``)."""
    tree = ast.parse(source, filename)
    found = find_sites(tree)
    import sys
    chosen = {id(s.loop): s for s in found if s.reason is None}
    _REFUSED[:] = []
    if chosen or "flamefuse.loops.guard" in sys.modules:    # (none compilable: no guard, no NumPy imported)
        from flamefuse.loops import guard
        guard.SITES[:] = found
        guard.reset()
    else:
        _REFUSED[:] = found
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if not chosen or GLOBAL in used or LOCAL in used:
        if chosen:
            for s in found:
                s.reason = s.reason or f"the script uses the name {GLOBAL} or {LOCAL}"
        return compile(tree, filename, "exec", dont_inherit=True)
    _replace(tree, chosen)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec", dont_inherit=True)


_REFUSED: list = []     # the sites of a script with none compilable (the guard is not imported for them)


def guard_module():
    """The guard with this script's sites (for ``--explain`` and the summary, after the run:
    imported then where every site was refused), or None when the script has none."""
    import sys
    if _REFUSED:
        from flamefuse.loops import guard
        guard.SITES[:] = _REFUSED
        guard.reset()
        _REFUSED[:] = []
    return sys.modules.get("flamefuse.loops.guard")


def install(namespace: dict) -> None:
    """Give the script's globals the guard (when it has a site)."""
    import sys
    guard = sys.modules.get("flamefuse.loops.guard")
    if guard is not None and any(s.reason is None for s in guard.SITES):
        namespace[GLOBAL] = guard.run
