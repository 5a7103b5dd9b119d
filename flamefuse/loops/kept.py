"""A script's compiled loops kept per script digest in the store (kind ``loops``): no AST pass
on a warm run.

``flamefuse fuse`` compiles every script whose text contains ``range(`` through
:mod:`flamefuse.loops.rewrite` (its AST parsed, walked for loop sites, rewritten and compiled:
1-3 ms for a corpus program, with the imports of the walk). The result depends only on the
script's bytes, its file name (the code's ``co_filename``), Python's optimisation level and
flamefuse's loops code, so it is kept:

``compile_script(source, filename)``: the code object and the sites, read from the entry
``code <file name> <SHA-256 of the text> <optimisation level>`` (the code ``marshal``-ed as
Python keeps bytecode, the sites as plain values: :meth:`flamefuse.loops.site.Site.plain`);
on a miss rewritten (a ``SyntaxError`` propagates, nothing is kept) and the entry written. The
sites are then the running script's (:func:`flamefuse.loops.site.publish`); those read from
the store have no AST node (``loop`` None).

``rendered(site, sig) -> (text, None) | (None, reason)``: the site's loop rendered for the
argument types ``sig`` (:func:`flamefuse.loops.render.render`), or why it is not, read from the
entry ``render <digest> <site> <sig>``; on a miss the loop's node is found again from the
script's text (:func:`loop_of`), rendered and the entry written.

Entries are the store's (:mod:`flamefuse.store`: the user's private folder, this version's
stamp, the kind's stamp covering the whole ``flamefuse/loops`` package and Python's version;
the code runs with the trust a native library of the same folder has). Anything unreadable is
a miss; with no cache folder every run compiles as before.
"""
from __future__ import annotations

import marshal
import sys

from flamefuse import store
from flamefuse.digest import sha256
from flamefuse.loops.site import SCRIPT, SITES, Site, publish

KIND = "loops"


def compile_script(source: bytes, filename: str):
    """The script's code with its loop sites guarded, and its sites published (see the module doc)."""
    digest = sha256(source).hexdigest()
    key = f"code {filename} {digest} {sys.flags.optimize}"
    kept = _read(key)
    if kept is None:
        from flamefuse.loops.rewrite import rewritten
        code, sites = rewritten(source, filename)
        store.put(KIND, key, marshal.dumps((code, tuple(s.plain() for s in sites))), ".code")
    else:
        code, sites = kept
    publish(sites, source, filename, digest)
    return code


def _read(key: str):
    data = store.get(KIND, key, ".code")
    if data is None:
        return None
    try:
        code, plain = marshal.loads(data)
        sites = [Site.of(p) for p in plain]
    except Exception:           # noqa: BLE001 -- a damaged entry is a miss
        return None
    if type(code).__name__ != "code" or [s.index for s in sites] != list(range(len(sites))):
        return None
    return code, sites


def rendered(site: Site, sig: tuple) -> tuple:
    """``(text, None)`` or ``(None, reason)`` for ``site`` and ``sig`` (see the module doc)."""
    key = f"render {SCRIPT[2]} {site.index} {' '.join(sig)}"
    data = store.get(KIND, key, ".loop")
    if data is not None:
        head, _, body = data.decode().partition("\n")
        if head in ("text", "refused"):
            return (body, None) if head == "text" else (None, body)
    from flamefuse.loops.extract import Refused
    from flamefuse.loops.render import render
    try:
        out = (render(loop_of(site), sig), None)
    except Refused as err:
        out = (None, str(err))
    store.put(KIND, key, ("text\n" + out[0]) if out[0] is not None else ("refused\n" + out[1]), ".loop")
    return out


def loop_of(site: Site) -> Site:
    """``site`` with its AST node: found again from the script's text where it was read from the
    store (every site of :data:`flamefuse.loops.site.SITES` gets its node; a site that is not
    found the same again raises ``LookupError``: the guard runs the loop as written)."""
    if site.loop is not None:
        return site
    if site.module is not None and site.index < len(SITES) and SITES[site.index] is not site:
        from flamefuse.loops.scope import variant_loop      # a module-level site's compiled variant
        site.loop = variant_loop(loop_of(SITES[site.index]).loop)
        return site
    import ast

    from flamefuse.loops.extract import sites as find_sites
    source, filename, _ = SCRIPT
    found = find_sites(ast.parse(source, filename))
    for mine, again in zip(SITES, found):
        if (mine.index, mine.function, mine.line) == (again.index, again.function, again.line):
            mine.loop = again.loop
    if site.loop is None:
        raise LookupError(f"loop site {site.index} not found again in {filename}")
    return site


__all__ = ["KIND", "compile_script", "loop_of", "rendered"]
