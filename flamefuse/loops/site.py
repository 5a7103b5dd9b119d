"""A script's loop sites (:mod:`flamefuse.loops.extract` finds them), and the running script's.

``Site``: one site, a plain class, kept apart from the AST walk so that a warm run, which reads
its sites from the store (:mod:`flamefuse.loops.kept`), imports neither the walk nor
``dataclasses``: ``plain()`` is the site as plain values (what a store entry holds; ``loop``,
the AST node, is left out) and ``of(plain)`` the site again with ``loop`` None (found again
from the script's text where a loop is rendered: :func:`flamefuse.loops.kept.loop_of`).

The running script: ``publish(sites, text, file name, digest)`` makes ``SITES`` and ``SCRIPT``
its own and empties ``STATE`` (the guard's tallies per site, :mod:`flamefuse.loops.guard`);
``compilable()`` says whether any site may be compiled (only then is the guard imported and
installed); ``explain()`` gives ``--explain``'s lines and ``summary()`` the summary's line.
"""
from __future__ import annotations

GLOBAL = "_flamefuse_loops"     # the guard's name in the script's globals (flamefuse.loops.rewrite)
RESERVED = ("_ff_start", "_ff_stop", "_ff_step")      # the compiled part's outer range (flamefuse.loops.scope)
SITES: list = []                # the running script's sites (Site), by index
SCRIPT: list = []               # [text (bytes), file name, digest] of the script SITES are from
STATE: dict = {}                # index -> the guard's tallies of the site (flamefuse.loops.guard)


class Site:
    """One loop site (a plain class: a script without loops must not pay for ``dataclasses``)."""
    __slots__ = ("index", "function", "line", "loop", "reason", "params", "arrays", "written", "funcs",
                 "numpy_name", "module", "fixed")

    def __init__(self, index: int, function: str, line: int, loop):
        self.index, self.function, self.line, self.loop = index, function, line, loop
        self.reason: str | None = None
        self.params: list = []
        self.arrays: set = set()
        self.written: set = set()
        self.funcs: list = []           # 'np', 'range', 'abs', 'min', 'max' as used
        self.numpy_name = "np"
        self.module: ModuleScope | None = None      # a module-level site's (extract.module_sites)
        self.fixed = False      # its slices' bounds use no loop variable (extract.fixed_slices)

    def plain(self) -> tuple:
        """The site as plain values (``marshal``-able), without its AST node."""
        return (self.index, self.function, self.line, self.reason, tuple(self.params),
                tuple(sorted(self.arrays)), tuple(sorted(self.written)), tuple(self.funcs), self.numpy_name,
                None if self.module is None else self.module.plain(), self.fixed)

    @classmethod
    def of(cls, plain) -> "Site":
        """The site of :meth:`plain`'s tuple (``loop`` None)."""
        index, function, line, reason, params, arrays, written, funcs, numpy_name, module, fixed = plain
        site = cls(int(index), str(function), int(line), None)
        site.reason = None if reason is None else str(reason)
        site.params, site.arrays, site.written = list(params), set(arrays), set(written)
        site.funcs, site.numpy_name = list(funcs), str(numpy_name)
        site.module = None if module is None else ModuleScope.of(module)
        site.fixed = bool(fixed)
        return site


class ModuleScope:
    """What the guard of a module-level site needs to leave the module's globals as Python would
    (:mod:`flamefuse.loops.scope`): ``chains`` (each loop variable: the loops from the outermost
    down to its own, each with its ``range`` arguments' source, the outermost's None),
    ``witnesses`` (each other name the loop assigns: the loop variable whose loop body assigns
    it on every run of that body), ``peel`` (there are such names: the last iteration of the
    outermost loop runs as written, so Python itself gives them their final values and types)."""
    __slots__ = ("peel", "chains", "witnesses", "compiled")

    def __init__(self, chains: dict, witnesses: dict):
        self.chains, self.witnesses = chains, witnesses
        self.peel = bool(witnesses)
        self.compiled = None            # the Site rendered (scope.variant), made at the first call

    def plain(self) -> tuple:
        """The scope as plain values (``compiled`` is the run's, not kept)."""
        return (tuple((v, tuple(tuple(link) for link in chain)) for v, chain in self.chains.items()),
                tuple(self.witnesses.items()))

    @classmethod
    def of(cls, plain) -> "ModuleScope":
        chains, witnesses = plain
        return cls({str(v): [(str(var), None if src is None else str(src)) for var, src in chain]
                    for v, chain in chains}, {str(x): str(v) for x, v in witnesses})


def publish(sites: list, source: bytes, filename: str, digest: str) -> None:
    """Make ``sites`` the running script's (:data:`SITES`, the tallies reset), with the script's
    text, file name and digest (:data:`SCRIPT`: where a site's loop is found again to be
    rendered, :func:`flamefuse.loops.kept.loop_of`)."""
    SITES[:] = sites
    SCRIPT[:] = [source, filename, digest]
    STATE.clear()


def compilable() -> bool:
    """Whether the running script has a site to compile (its guard is then installed:
    :func:`flamefuse.loops.guard.install`; else the guard is not even imported)."""
    return any(s.reason is None for s in SITES)


def explain() -> list[str]:
    """``--explain``'s lines: per loop site, what was decided and why."""
    out = []
    for site in SITES:
        where = (f"loop {site.function}() line {site.line}" if not site.function.startswith("<")
                 else f"loop at {site.function[1:-1]} level line {site.line}")
        if site.reason is not None:
            out.append(f"{where}: runs as written: {site.reason}")
            continue
        state = STATE.get(site.index)
        if state is None:
            out.append(f"{where}: compilable; not reached")
            continue
        parts = [f"compiled {state.compiled} calls"]
        parts += [f"as written {n}: {why}" for why, n in state.declined.most_common()]
        out.append(f"{where}: " + "; ".join(parts))
    return out


def summary() -> str | None:
    """One summary line, or None when the script has no loop site."""
    if not SITES:
        return None
    ok = sum(s.reason is None for s in SITES)
    compiled = sum(s.compiled for s in STATE.values())
    declined = sum(sum(s.declined.values()) for s in STATE.values())
    return (f"  compiled loops (FLAMEFUSE_LOOPS): {ok} of {len(SITES)} loop sites compilable; "
            f"{compiled} calls ran compiled, {declined} as written")
