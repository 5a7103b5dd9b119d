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
:func:`flamefuse.loops.guard.install`; the loop keeps its own line numbers, so a traceback from
it reads as before. A script that uses either name itself, or has no compilable site, is
compiled unchanged. :data:`flamefuse.loops.site.SITES` holds the sites (refused ones too, for
``--explain``). ``flamefuse fuse`` keeps the result per script (:mod:`flamefuse.loops.kept`).

A loop at module level, whose names are the module's globals, is written differently
(:func:`_module_replacement`, :mod:`flamefuse.loops.scope`): ``for i in _flamefuse_loops(<index>,
lambda: (<params>, <functions>), <its range as written>): <the body as written>`` then the end
mark; the guard returns what of the range is left to run as written.
"""
from __future__ import annotations

import ast

from flamefuse.loops.extract import sites as find_sites
from flamefuse.loops.site import GLOBAL

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


def rewritten(source: bytes | str, filename: str) -> tuple:
    """``(code, sites)``: the code object of ``source`` with its loop sites guarded
    (SyntaxError as ``compile``), and every site found (refused ones too); compiled with the
    script's own ``__future__`` imports only (``dont_inherit``: never this module's
    ``annotations``). Nothing else is changed (:func:`compile_script` publishes the sites)."""
    tree = ast.parse(source, filename)
    found = find_sites(tree)
    chosen = {id(s.loop): s for s in found if s.reason is None}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if not chosen or GLOBAL in used or LOCAL in used:
        if chosen:
            for s in found:
                s.reason = s.reason or f"the script uses the name {GLOBAL} or {LOCAL}"
        return compile(tree, filename, "exec", dont_inherit=True), found
    _replace(tree, chosen)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec", dont_inherit=True), found


def compile_script(source: bytes | str, filename: str):
    """The code object of ``source`` with its loop sites guarded (:func:`rewritten`), its sites
    made the running script's (:func:`flamefuse.loops.site.publish`). ``flamefuse fuse`` goes
    through :func:`flamefuse.loops.kept.compile_script`, which keeps both per script."""
    from flamefuse.digest import sha256
    from flamefuse.loops.site import publish
    code, found = rewritten(source, filename)
    data = source.encode() if isinstance(source, str) else source
    publish(found, data, filename, sha256(data).hexdigest())
    return code
