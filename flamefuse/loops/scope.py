"""Module-level loops at run time: the compiled part's range and the globals Python would leave.

At module level a loop's names are the module's globals, which the code after the loop (or a
function it calls later) reads: after a compiled call every name the loop assigns must hold the
value, and the type, that running the loop as written would have left, and a name the loop
never assigned (a loop that runs zero times) must keep its earlier value or stay unbound.
:mod:`flamefuse.loops.rewrite` writes such a site as::

    for i in _flamefuse_loops(k, lambda: (<params>, <functions>), range(...)):   # the range as written
        <the body as written>
    _flamefuse_loops(-1 - k, None)

The guard (:func:`flamefuse.loops.guard.run`) returns the range itself to run the loop as
written, or what is left of it after the compiled part ran: nothing, or, where the loop assigns
names other than loop variables (:attr:`~flamefuse.loops.site.ModuleScope.peel`), the last
iteration of the outermost loop, which Python then runs as written and which gives those names
their final values and types itself (each is assigned on every run of some loop's body:
:func:`plan` checks that body runs in the last iteration). Loop variables are ints: their final
values are recomputed here from the ranges, each ``range(...)`` evaluated by Python from the
loop's own expressions (:func:`last`), and written into the module's globals before the last
iteration runs.

:func:`variant` gives the site rendered and compiled: the loop with its outermost ``range``'s
arguments replaced by the three ints ``_ff_start, _ff_stop, _ff_step`` of the compiled part
(:data:`flamefuse.loops.site.RESERVED`), passed by the guard after the loop's own arguments.
"""
from __future__ import annotations

from flamefuse.loops.site import RESERVED, Site

UNSET = object()
_CODES: dict = {}


def variant(site: Site) -> Site:
    """The site as compiled (see the module doc), made once. Its loop (AST) is made from the
    site's where the site has one; a site read from the store (a warm run: no AST) gets it only
    where its rendered text is not kept (:func:`flamefuse.loops.kept.loop_of`)."""
    scope = site.module
    if scope.compiled is None:
        v = Site(site.index, site.function, site.line, None if site.loop is None else variant_loop(site.loop))
        v.params = [*site.params, *RESERVED]
        v.arrays, v.written, v.funcs, v.numpy_name = site.arrays, site.written, site.funcs, site.numpy_name
        v.module, v.fixed = scope, site.fixed
        scope.compiled = v
    return scope.compiled


def variant_loop(loop):
    """A copy of the ``for`` node ``loop`` whose ``range`` arguments are :data:`RESERVED`'s names."""
    import ast
    import copy
    loop = copy.deepcopy(loop)
    loop.iter.args = [ast.copy_location(ast.Name(n, ast.Load()), loop.iter) for n in RESERVED]
    return loop


def _code(src: str):
    code = _CODES.get(src)
    if code is None:
        code = _CODES[src] = compile(src, "<flamefuse loop range>", "eval")
    return code


BUDGET = 2000      # inner ranges evaluated per call at most (else the loop runs as written)


class _TooLong(Exception):
    pass


def last(chain: list, outer: range, env: dict, budget: list):
    """The final value of the variable of the loop ``chain[-1]`` (loops from the outermost down)
    when the outermost runs over ``outer``: the last value of its range in the last iteration
    of the loops around it where that range is not empty; :data:`UNSET` if there is none. Each
    inner range is ``range`` of its arguments evaluated in ``env`` (the loop's arguments) with
    the outer variables set, as the loop as written evaluates them; ``budget[0]`` counts them
    down (:class:`_TooLong` at zero: a search back through many empty ranges could cost more
    than the loop)."""
    def go(t, r):
        if t == len(chain) - 1:
            return r[-1] if r else UNSET
        var, code = chain[t][0], _code(chain[t + 1][1])
        for value in reversed(r):
            budget[0] -= 1
            if budget[0] < 0:
                raise _TooLong
            env[var] = value
            found = go(t + 1, range(*eval(code, env)))      # noqa: S307 -- the script's own range arguments
            if found is not UNSET:
                return found
        return UNSET
    return go(0, outer)


def plan(site: Site, args: tuple, r):
    """``(part, finals, values)`` for a compiled call of module-level ``site`` on ``args`` (its
    parameters then functions) over the range ``r`` of its outermost loop: the part of ``r``
    the compiled loop runs, the loop variables' values after it (those it sets), and the
    compiled variant's arguments; or the reason to run the loop as written (a str)."""
    if type(r) is not range:
        return "its range() did not give a range"
    if not r:
        return "its range is empty"
    scope = site.module
    part = r[:-1] if scope.peel else r
    if not part:
        return "one iteration (its last runs as written)"
    env = dict(zip([*site.params, *site.funcs], args))
    env["__builtins__"] = {}
    finals, budget, tail = {}, [BUDGET], r[-1:]
    try:
        for v, chain in scope.chains.items():
            value = last(chain, part, env, budget)
            if value is not UNSET:
                finals[v] = value
        for name, v in scope.witnesses.items():
            if last(scope.chains[v], tail, env, budget) is UNSET:
                return f"{name} may not be assigned in its last iteration (its final value would not be known)"
    except _TooLong:
        return f"its loop variables' final values take over {BUDGET} evaluations of inner ranges to find"
    n = len(site.params)
    return part, finals, (*args[:n], part.start, part.stop, part.step, *args[n:])
