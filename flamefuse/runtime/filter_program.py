"""A recorded segment as a combinator program, clustered, and planned as loops and externals.

:func:`convert` reads the segment's ops (bases numbered by first use, as in
:func:`flamefuse.runtime.filters._key`) in order and gives every write of a
base a new *version* name ``b<base>v<k>`` (``v0``: the data before the
segment). Each op becomes a :class:`Node`:

* ``map`` -- an elementwise op (``ew`` or ``sew``) writing a fresh base once,
  through its whole contiguous view, whose array operands are whole
  contiguous views (any offset for data from before the segment; exactly the
  written view for data a map or filter of the segment made), broadcast
  single elements (``scalar``, not of a map of its own iteration space) or
  constants (a wrapped view, ``np.roll`` read in place, is none of these: its op is an
  external, which the WSP runtime runs with the wrap fused);
* ``fold`` -- a full reduction (``reduce`` with no axis over such a view, or
  ``sreduce``) into a fresh 0-d base;
* ``filter`` -- a selection; its output domain is named by the mask's
  version, so every selection by one mask shares one (rigid) size;
* ``external`` -- anything else; consecutive ones merge. An external lists
  as inputs what it reads, the version it overwrites, the outputs of the
  nodes that read that version (write-after-read order) and the previous
  external (externals keep their order); all its edges prevent fusion.

Domains: ``("flat", N)`` for ops over N contiguous elements, or the mask
version name of a selection; ``parent`` maps a selection domain to the
domain its filter iterates over. :func:`make_plan` builds the
:class:`flamefuse.cluster.program.Program` and :class:`~flamefuse.cluster.sizes.Sizes`
(one flexible size per flat length, one rigid size per selection domain),
clusters it (ILP up to ``max_ilp`` nodes, else the pull-stream baseline),
splits any cluster whose domains do not nest under one root into single
nodes, and returns a :class:`Plan`: per cluster an external (its op indices
and the bases other nodes use, which the WSP run must not contract) or a
loop from :func:`flamefuse.runtime.filter_kernel.loop_source`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from math import prod

from flamefuse.runtime.views import contiguous


@dataclass
class Node:
    kind: str                       # map, fold, filter, external
    name: str                       # ufunc / reduction name ("select" for filters)
    out: tuple[str, ...]            # versions written
    out_base: tuple[int, ...]
    domain: object = None           # iteration domain (None for externals)
    ins: tuple = ()                 # ("elem"|"scalar", version, base, offset), ("const", i, dt)
    loop: tuple = ()
    group: str | None = None        # filter: the domain of its output
    ops: list = field(default_factory=list)
    order: list = field(default_factory=list)   # externals: versions only for ordering


@dataclass(frozen=True)
class Step:
    ops: tuple[int, ...]
    loop: object                    # filter_kernel.Loop, or None for an external
    keep: frozenset


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    clusters: tuple[tuple[int, ...], ...]
    nodes: int


def _is_contiguous(view, shape) -> bool:
    return view.shape == tuple(shape) and view.strides == contiguous(tuple(shape)).strides and not view.wrap


def convert(ops, infos):
    """(nodes, parent, dtypes): the segment as nodes in program order."""
    writes = Counter(op.out[0] for op in ops)
    dtypes = [info[0] for info in infos]
    version, made_by, domain_of, parent = {}, {}, {}, {}
    nodes: list[Node] = []
    readers: dict[str, set] = {}
    counter = Counter()

    def current(b):
        if b not in version:
            version[b] = f"b{b}v0"
        return version[b]

    def write(b, kind, node_index, dom=None):
        counter[b] += 1
        v = version[b] = f"b{b}v{counter[b]}"
        made_by[v] = (kind, node_index)
        domain_of[v] = dom
        return v

    def operand(x, shape):
        """A map/fold operand descriptor, or None when the op must be external."""
        if x[0] == "s":
            return ("const", x[1], x[2])
        b, view = x
        v = current(b)
        made = made_by.get(v, (None,))[0]
        if view is None:
            return ("elem", v, b, 0)
        n = prod(shape)
        if _is_contiguous(view, shape):
            if made in ("map", "filter") and (view.offset or infos[b][1] != n):
                return None
            return ("elem", v, b, view.offset)
        if all(s == 0 for s in view.strides):
            return None if made in ("map", "filter") else ("scalar", v, b, view.offset)
        return None

    for i, op in enumerate(ops):
        kind, name, out, ins, shape, loop = op.kind, op.name, op.out, op.ins, op.shape, op.loop
        ob = out[0]
        node = None
        if kind in ("sew", "sreduce", "select"):
            descs = [_selection_operand(x, current) for x in ins]
            elems = [d for d in descs if d[0] == "elem"]
            src = elems[-1] if kind == "select" else elems[0]
            dom = domain_of.get(src[1]) or ("flat", prod(ins[-1][1].shape if kind == "select"
                                                          else ()))
            if kind == "select":
                node = Node("filter", "select", (), (ob,), dom, tuple(descs), loop,
                            group=descs[1][1])
                parent[descs[1][1]] = dom
            else:
                node = Node("fold" if kind == "sreduce" else "map", name, (), (ob,), dom,
                            tuple(descs), loop)
        elif kind in ("ew", "reduce") and infos[ob][2] and writes[ob] == 1 \
                and (kind == "ew" or op.axis is None) \
                and all(x[0] != ob for x in ins):
            oshape = shape if kind == "ew" else ()
            if out[1] == contiguous(tuple(oshape)) and infos[ob][1] == prod(oshape):
                descs = [operand(x, shape) for x in ins]
                if all(d is not None for d in descs):
                    node = Node("map" if kind == "ew" else "fold", name, (), (ob,),
                                ("flat", prod(shape)), tuple(descs), loop)
        if node is not None:
            k = len(nodes)
            for d in node.ins:
                if d[0] != "const":
                    readers.setdefault(d[1], set()).add(k)
            dom = node.group if node.kind == "filter" else node.domain
            node.out = (write(ob, node.kind, k, dom),)
            node.ops = [i]
            nodes.append(node)
            continue
        _external(nodes, i, ops[i], current, write, readers, made_by)
    return nodes, parent, dtypes


def _selection_operand(x, current):
    """Operands of ops the front end made for selections: a selection (or a select's whole
    contiguous source or mask) is an element, another view a broadcast single element."""
    if x[0] == "s":
        return ("const", x[1], x[2])
    b, view = x
    return ("elem" if view is None or view.shape else "scalar", current(b), b,
            0 if view is None else view.offset)


def _external(nodes, i, op, current, write, readers, made_by) -> None:
    if nodes and nodes[-1].kind == "external":
        node, k = nodes[-1], len(nodes) - 1
    else:
        k = len(nodes)
        previous = next((n for n in reversed(nodes) if n.kind == "external"), None)
        node = Node("external", "external", (), ())
        node.order = list(previous.out) if previous else []
        nodes.append(node)
    ob = op.out[0]
    reads = {x[0] for x in op.ins if x[0] != "s"} | {ob}
    own = set(node.out)
    for b in sorted(reads):
        v = current(b)
        if v not in own:
            node.ins = tuple(dict.fromkeys(node.ins + (("elem", v, b, 0),)))
            readers.setdefault(v, set()).add(k)
    war = [nodes[r].out for r in readers.get(current(ob), ()) if r != k]
    node.order += [v for outs in war for v in outs if v not in own]
    node.out = node.out + (write(ob, "external", k),)
    node.out_base = node.out_base + (ob,)
    node.ops.append(i)


def combinator_program(nodes, parent):
    """The :class:`flamefuse.cluster.program.Program` and :class:`Sizes` of ``nodes``."""
    from flamefuse.cluster.program import Binding, Program
    from flamefuse.cluster.sizes import Sizes, Var
    made = {v for n in nodes for v in n.out}
    params = sorted({d[1] for n in nodes for d in n.ins if d[0] != "const"} - made)
    variables: dict = {}

    def var(dom):
        if dom not in variables:
            variables[dom] = Var(len(variables) + 1, not isinstance(dom, tuple))
        return variables[dom]
    bindings, iters = [], []
    for n in nodes:
        arrays = tuple(dict.fromkeys(d[1] for d in n.ins if d[0] == "elem"))
        scalars = tuple(dict.fromkeys(d[1] for d in n.ins if d[0] == "scalar"))
        if n.kind == "external":
            arrays = tuple(dict.fromkeys(arrays + scalars + tuple(n.order)))
            bindings.append(Binding("external", n.out, arrays))
            iters.append(None)
            continue
        bindings.append(Binding(n.kind, n.out, arrays, scalars,
                                scalar_outputs=n.out if n.kind == "fold" else ()))
        iters.append(var(n.domain))
    program = Program(tuple(params), (), tuple(bindings), ())
    return program, Sizes({}, tuple(iters), "")


def _root(nodes, members, parent):
    """The one domain every member's domain nests under through filters in the cluster."""
    inside = {nodes[i].group for i in members if nodes[i].kind == "filter"}
    roots = set()
    for i in members:
        d = nodes[i].domain
        while d in inside:
            d = parent[d]
        roots.add(d)
    return roots.pop() if len(roots) == 1 else None


def make_plan(ops, infos, max_ilp: int) -> Plan:
    from flamefuse.cluster.baselines import stream
    from flamefuse.cluster.graph import build
    from flamefuse.cluster.solve import solve
    from flamefuse.runtime.filter_kernel import loop_source
    nodes, parent, dtypes = convert(ops, infos)
    program, sizes = combinator_program(nodes, parent)
    g = build(program, sizes)
    clusters = (solve(g) if g.n <= max_ilp else stream(g)).clusters
    split = []
    for c in clusters:
        if nodes[c[0]].kind != "external" and _root(nodes, c, parent) is None:
            split += [(i,) for i in c]
        else:
            split.append(tuple(c))
    where = {i: k for k, c in enumerate(split) for i in c}
    read_in: dict[str, set] = {}
    for k, n in enumerate(nodes):
        for d in n.ins:
            if d[0] != "const":
                read_in.setdefault(d[1], set()).add(where[k])
    final = {}
    for n in nodes:
        for v, b in zip(n.out, n.out_base):
            final[b] = v
    keepers = {v for b, v in final.items() if not infos[b][3]}
    steps = []
    for k, c in enumerate(split):
        if nodes[c[0]].kind == "external":
            others = {d[2] for j, n in enumerate(nodes) if where[j] != k for d in n.ins
                      if d[0] != "const"} | {b for j, n in enumerate(nodes) if where[j] != k
                                             for b in n.out_base}
            steps.append(Step(tuple(nodes[c[0]].ops), None, frozenset(others)))
            continue
        made = {v for i in c for v in nodes[i].out}
        store = {v for v in made if v in keepers or read_in.get(v, set()) - {k}}
        loop = loop_source(nodes, c, _root(nodes, c, parent), parent, store, dtypes)
        steps.append(Step(tuple(op for i in c for op in nodes[i].ops), loop, frozenset()))
    return Plan(tuple(steps), tuple(split), len(nodes))
