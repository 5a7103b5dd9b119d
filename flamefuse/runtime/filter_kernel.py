"""One Numba loop per cluster of a segment with filters: the generated source and its call.

``loop_source(nodes, members, root, parent, store, dtypes)`` returns a
:class:`Loop`. The function ``kernel(n, a0, a1, ...)`` loops ``t`` over the
root domain's ``n`` elements (a flat length, or the length of a selection
made by an earlier loop). Per selection domain ``G`` filtered inside the
cluster it keeps a flag ``k_G`` (the mask element, computed once per
iteration, under its parent's flag for nested selections) and a counter
``c_G`` (the index of the current element in ``G``, advanced at the end of
the iteration). A flat root of at least ``PARALLEL_MIN`` elements that
stores no selection and reads none from memory runs in at most ``SPLIT`` chunks
under ``prange`` (a constant: the result does not depend on the thread count),
each with private accumulators and counters combined pairwise
after the loop (as in the runtime's kernels). Members run in program
order: a map computes a typed local ``e_<version>`` (stored at its
domain's index when ``store`` names it), a filter binds its source element
under ``k_G``, a fold updates an accumulator (identities and combination shared with
:mod:`flamefuse.runtime.kernel`; ``mean`` sums in float64 and divides by the
domain's count after the loop, ``count`` counts; float sums and means add their terms
in blocks combined pairwise, :mod:`flamefuse.runtime.summation`). Loads come from the
cluster's own locals, else from memory (arrays passed sliced at their
offset; broadcast single elements and constants read once before the
loop). The kernel returns ``(n, c_G...)``; the caller trims stored
selection outputs to their counts.

``Loop.args`` describes each argument after ``n``: ``("in", base, offset)``,
``("scalar", base, offset)``, ``("const", index, dtype)`` or
``("out", base, size)`` (a new buffer of ``size`` elements, ``None`` = ``n``).
``Loop.checks`` lists the folds that need a non-empty domain
(``maximum``/``minimum``: NumPy's error; ``mean``: its warning).
Locals are named after versions and domains, renamed in the text by first appearance
(:func:`canonical`), so a loop body recorded at each iteration of the script's loop is one
kernel. The source compiles through the runtime's kernel caches
(:func:`flamefuse.runtime.kernel.compile_kernel`; ``FLAMEFUSE_JIT=0`` runs it
as plain Python).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import SimpleNamespace

from flamefuse.runtime import summation
from flamefuse.runtime.npcomplex import import_line
from flamefuse.runtime.kernel import PARALLEL_MIN, SPLIT, _acc_dtype, _combine, _identity, cast, op_expr

EMPTY_NAMES = {"max": "maximum", "min": "minimum", "mean": "mean"}


@dataclass(frozen=True)
class Loop:
    source: str
    length: object              # int (flat root) or the root selection domain's name
    args: tuple
    groups: tuple[str, ...]     # selection domains whose counts the kernel returns
    trim: dict                  # stored base -> its selection domain
    checks: tuple               # (base, domain, what)
    parallel: bool              # chunks under prange with private accumulators


def typed(expr: str, dtype: str) -> str:
    return f"bool({expr})" if dtype == "bool" else f"np.{dtype}({expr})"


def loop_source(nodes, members, root, parent, store, dtypes) -> Loop:
    groups = tuple(dict.fromkeys(nodes[i].group for i in members if nodes[i].kind == "filter"))
    length = root[1] if isinstance(root, tuple) else root
    made = {v: nodes[i] for i in members for v in nodes[i].out}
    args, names, pre, init, body, post, count_up, accs, sums = [], {}, [], [], [], [], [], [], []
    nested_reads = [False]
    trim, checks, keep_done, last = {}, [], set(), [None]
    mask_of = {nodes[i].group: nodes[i].ins[1] for i in members if nodes[i].kind == "filter"}

    def arg(spec):
        if spec not in names:
            names[spec] = f"a{len(names)}"
            args.append(spec)
        return names[spec]

    def index(dom):
        return "t" if dom == root else f"c_{dom}"

    def load(d, dom):
        """(expression, dtype) of operand descriptor ``d`` read in domain ``dom``."""
        if d[0] == "const":
            return arg(("const", d[1], d[2])), d[2]
        dt = dtypes[d[2]]
        if d[1] in made:
            return f"e_{d[1]}", dt
        if d[0] == "scalar":
            name = arg(("scalar", d[2], d[3]))
            if f"{name}v = {name}[0]" not in pre:
                pre.append(f"{name}v = {name}[0]")
            return f"{name}v", dt
        nested_reads[0] = nested_reads[0] or dom != root
        return f"{arg(('in', d[2], d[3]))}[{index(dom)}]", dt

    def guard(dom) -> str:
        need(dom)
        return "" if dom == root else f"if k_{dom}:"

    def need(dom):
        """Emit the keep flag of selection domain ``dom`` (and its parents') once."""
        if dom == root or dom in keep_done:
            return
        keep_done.add(dom)
        p = parent[dom]
        need(p)
        m, _ = load(mask_of[dom], p)
        body.extend([f"k_{dom} = {m}"] if p == root else [f"if k_{p}:", f"    k_{dom} = {m}"])

    def emit(dom, lines):
        g = guard(dom)
        if g and last[0] == (g, len(body)):      # continue the previous block's guard
            g = ""
            lines = ["    " + s for s in lines]
        elif g:
            lines = [g] + ["    " + s for s in lines]
        body.extend(lines)
        last[0] = (guard(dom), len(body)) if dom != root else None

    for i in members:
        n = nodes[i]
        v, b = n.out[0], n.out_base[0]
        odt = dtypes[b]
        if n.kind == "filter":
            need(n.group)
            src, sdt = load(n.ins[0], n.domain)
            lines = [f"e_{v} = {typed(src, odt)}"]
            if v in store:
                lines.append(f"{arg(('out', b, None))}[c_{n.group}] = e_{v}")
                trim[b] = n.group
            emit(n.group, lines)
            if n.group != root:
                init.append(f"e_{v} = {typed(0, odt)}")
        elif n.kind == "map":
            op = SimpleNamespace(name=n.name, loop=n.loop)
            vals = [cast(*load(d, n.domain), dt) for d, dt in zip(n.ins, n.loop[:-1])]
            lines = [f"e_{v} = {typed(cast(op_expr(op, vals), n.loop[-1], odt), odt)}"]
            if v in store:
                lines.append(f"{arg(('out', b, None))}[{index(n.domain)}] = e_{v}")
                if n.domain != root or not isinstance(root, tuple):
                    trim[b] = n.domain
            emit(n.domain, lines)
            if n.domain != root:
                init.append(f"e_{v} = {typed(0, odt)}")
        else:
            _fold(n, v, b, odt, load, emit, accs, post, arg, index, root, sums)
            if n.name in EMPTY_NAMES:
                checks.append((b, length if n.domain == root else n.domain,
                               EMPTY_NAMES[n.name]))
    for g in groups:
        accs.append((f"c_{g}", "int64", "0", f"c_{g} + {{}}"))
        init.insert(0, f"k_{g} = False")
        count_up += [f"if k_{g}:", f"    c_{g} += 1"]
    trim = {b: (length if d == root else d) for b, d in trim.items()}
    parallel = (isinstance(root, tuple) and root[1] >= PARALLEL_MIN and not nested_reads[0]
                and all(d == length for d in trim.values()))
    params = ", ".join(["n"] + [names[a] for a in args])
    loop = init + body + count_up
    lines = ["import numpy as np", "from numba import njit, prange"] + import_line(loop) + ["", "",
             f"@njit(parallel={parallel}, cache=True, error_model='numpy')",
             f"def kernel({params}):"] + ["    " + h for h in pre]
    if parallel:
        lines += [f"    NCH = max(1, min(n, {SPLIT}))", "    CH = -(-n // NCH)"]
        lines += [f"    p_{a} = np.empty(NCH, dtype=np.{dt})" for a, dt, _, _ in accs]
        lines += ["    " + x for x in summation.levels(sums, "NCH", "np.int64")]
        lines += ["    for ch in prange(NCH):"]
        lines += [f"        {a} = {ident}" for a, _, ident, _ in accs]
        lines += ["        " + x for x in _loop("ch * CH", "min(n, ch * CH + CH)", loop, sums, "ch")]
        lines += [f"        p_{a}[ch] = {a}" for a, _, _, _ in accs]
        for a, _, _, comb in accs:
            lines += ["    " + x for x in summation.pairwise_parts(
                f"p_{a}", "NCH", lambda x, y, comb=comb: comb.replace(a, x, 1).format(y), "np.int64")]
            lines.append(f"    {a} = p_{a}[0]")
    else:
        lines += [f"    {a} = {ident}" for a, _, ident, _ in accs]
        lines += ["    " + x for x in summation.levels(sums, "1", "np.int64")]
        lines += ["    " + x for x in _loop("0", "n", loop, sums, "0")]
    lines += ["    " + x for x in post]
    lines.append("    return (n, " + "".join(f"c_{g}, " for g in groups) + ")")
    source = canonical("\n".join(lines) + "\n")
    return Loop(source, length, tuple(args), groups, trim, tuple(checks), parallel)


_VERSION = re.compile(r"(?<=_)b\d+v\d+(?!\d)")


def canonical(source: str) -> str:
    """``source`` with its locals' version and domain names (``e_b46v1``, ``c_b45v1``) numbered
    by first appearance (``e_v1``, ``c_v0``): the same loop recorded at another iteration of the
    script's loop, over other bases, is the same text, so one kernel (one compile, one native
    library) serves every iteration."""
    names: dict = {}
    return _VERSION.sub(lambda m: names.setdefault(m.group(0), f"v{len(names)}"), source)


def _loop(lo: str, hi: str, loop: list, sums: list, chunk: str) -> list:
    """The loop of ``t`` from ``lo`` to ``hi`` over the lines ``loop``; with float sums
    (``(acc, zero, dtype)``) in blocks of ``summation.BLOCK`` iterations, each block's sums pushed
    into chunk ``chunk``'s pairwise levels, and the levels added up after the loop."""
    if not sums:
        return [f"for t in range({lo}, {hi}):"] + ["    " + x for x in loop]
    block = summation.BLOCK
    return ([f"slb = {summation.base(chunk, 'np.int64')}", "nb = np.int64(0)", f"hi = {hi}",
             f"for tb in range({lo}, hi, {block}):", f"    for t in range(tb, min(hi, tb + {block})):"]
            + ["        " + x for x in loop]
            + ["    " + x for x in summation.push(sums, "nb", "slb", "np.int64")]
            + summation.finish(sums, "nb", "slb", "np.int64"))


def _fold(n, v, b, odt, load, emit, accs, post, arg, index, root, sums) -> None:
    acc = f"acc_{v}"
    out = arg(("out", b, 1))
    x, xdt = load(n.ins[0], n.domain)
    if n.name == "count":
        accs.append((acc, "int64", "0", f"{acc} + {{}}"))
        emit(n.domain, [f"{acc} += 1"])
        post.append(f"{out}[0] = {acc}")
        return
    if n.name == "mean":
        accs.append((acc, "float64", "np.float64(0.0)", f"{acc} + {{}}"))
        sums.append((acc, "np.float64(0.0)", "float64"))
        emit(n.domain, [f"{acc} += {cast(x, xdt, 'float64')}"])
        total = "n" if n.domain == root else index(n.domain)
        post.append(f"{out}[0] = {acc} / np.float64({total})")
        return
    op = SimpleNamespace(name=n.name, loop=n.loop)
    adt = _acc_dtype(op)
    accs.append((acc, adt, _identity(n.name, adt), _combine(n.name, adt, acc, "{}")))
    if summation.cascaded(n.name, adt):
        sums.append((acc, _identity(n.name, adt), adt))
    emit(n.domain, [f"{acc} = {_combine(n.name, adt, acc, cast(x, xdt, adt))}"])
    post.append(f"{out}[0] = {cast(acc, adt, odt)}")
