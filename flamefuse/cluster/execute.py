"""Running a clustered program: one generated Numba loop per cluster, and a naive reference.

:func:`evaluate` runs the program one combinator at a time with whole-array
NumPy operations and returns every bound value (``{name: array|float}``).

:func:`compile_program` generates, for each cluster, one Python function
with a single loop over the cluster's root iteration size (``generate``:
its size; ``cross``: ``len(a)·len(b)``; otherwise the length of the first
combinator's input).  Inside the loop each combinator computes its current
element; a filter sets a keep flag, and the combinators over its output run
under ``if keep:`` with the filter's running count as their index; folds
are scalar accumulators; an array is written to memory only when it is
returned or read by another cluster (otherwise it lives in a local
variable).  The functions are compiled with ``numba.njit(cache=True)``
(generated sources are kept under ``$FLAMEFUSE_CACHE_DIR/cluster`` or
``~/.cache/flamefuse/cluster``); ``jit=False`` runs the same code as plain
Python.  ``parallel=True`` makes a cluster's loop a ``prange`` where no
element is addressed by a filter's running count (folds and counts become
parallel reductions, so sums are reassociated); other clusters stay
sequential.  ``external`` clusters call the host semantics of
:mod:`flamefuse.cluster.program`.  :meth:`Compiled.run` takes
``{param: value}`` and returns ``{returned name: value}``;
:attr:`Compiled.sources` holds the generated code.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from flamefuse.cache import load_module
from flamefuse.jit import njit
from flamefuse.cluster.clusters import Clustering
from flamefuse.cluster.program import Program
from flamefuse.cluster.worker import parse, render


# ---------------------------------------------------------------- reference

def _vector(b, env, names) -> object:
    tree = parse(b)
    return eval(render(tree, names, vector=True), {"np": np}, env)  # noqa: S307 (checked AST)


def host_external(b, env) -> dict:
    """The fixed host function of ``external``: see the program module docstring."""
    arrays = [np.asarray(env[a], dtype=np.float64) for a in b.arrays]
    shift = float(sum(env[s] for s in b.scalars))
    joined = np.concatenate(arrays) if arrays else np.zeros(0)
    total = float(joined.sum()) + shift
    return {o: (total if o in b.scalar_outputs else joined + shift) for o in b.outputs}


def evaluate(program: Program, inputs: dict) -> dict:
    env = {k: (np.asarray(v, dtype=np.float64) if k in program.array_params else float(v))
           for k, v in inputs.items()}
    for b in program.bindings:
        names = {x: x for x in list(b.arrays) + list(b.scalars)}
        if b.kind == "fold":
            n = len(env[b.arrays[0]])
            terms = np.broadcast_to(_vector(b, env, names), (n,)).astype(np.float64)
            env[b.name] = float(np.cumsum(terms)[-1]) if n else 0.0   # left-to-right sum
        elif b.kind == "map":
            n = len(env[b.arrays[0]])
            env[b.name] = np.array(np.broadcast_to(_vector(b, env, names), (n,)), np.float64)
        elif b.kind == "filter":
            xs = env[b.arrays[0]]
            keep = np.broadcast_to(np.asarray(_vector(b, env, names)) != 0, xs.shape)
            env[b.name] = xs[keep]
        elif b.kind == "generate":
            n = max(0, int(env[b.size]))
            local = dict(env, i=np.arange(n, dtype=np.float64))
            env[b.name] = np.array(np.broadcast_to(
                _vector(b, local, dict(names, i="i")), (n,)), np.float64)
        elif b.kind == "gather":
            data, idx = env[b.arrays[0]], env[b.arrays[1]]
            env[b.name] = (data[np.abs(idx).astype(np.int64) % len(data)] if len(data)
                           else np.zeros(len(idx)))
        elif b.kind == "cross":
            a, c = env[b.arrays[0]], env[b.arrays[1]]
            local = dict(env)
            local[b.arrays[0]], local[b.arrays[1]] = np.repeat(a, len(c)), np.tile(c, len(a))
            env[b.name] = np.array(np.broadcast_to(_vector(b, local, names),
                                                   (len(a) * len(c),)), np.float64)
        else:
            env.update(host_external(b, env))
    return env


# ---------------------------------------------------------------- codegen

@dataclass(frozen=True)
class Step:
    nodes: tuple[int, ...]
    function: object             # callable, or None for an external
    args: tuple[str, ...]        # program names passed in, in order
    outputs: tuple[str, ...]     # program names returned, in order


def cluster_source(program: Program, members: tuple[int, ...], materialise: set,
                   parallel: bool = False) -> tuple:
    """(source, args, outputs) of the loop function for one cluster.

    ``parallel``: the loop is a ``prange`` (folds and filter counts become
    parallel reductions) when no element is addressed by a filter's running
    count, i.e. nothing depends on the order of the iterations.
    """
    bs = program.bindings
    prod = program.producer()
    inside = {o for i in members for o in bs[i].outputs}
    level = {}
    for i in members:
        b = bs[i]
        fused = [a for a in (b.arrays[1:] if b.kind == "gather" else b.arrays) if a in inside]
        level[i] = None                  # the in-cluster filter this node runs under
        if b.kind in ("map", "fold", "filter", "gather") and fused:
            p = prod[fused[0]]
            level[i] = p if bs[p].kind == "filter" else level[p]
    index = {None: "t"}
    index.update({i: f"c_{bs[i].name}" for i in members if bs[i].kind == "filter"})
    args = sorted({a for i in members for a in bs[i].arrays + bs[i].scalar_inputs} - inside)

    def ref(name, lvl, cross_pos=None):
        if name in inside:
            return f"e_{name}"
        if cross_pos is not None:
            return f"V_{name}[{cross_pos}]"
        return f"V_{name}[{index[lvl]}]" if program.is_array(name) else f"V_{name}"

    first = bs[members[0]]
    if first.kind == "generate":
        length = f"max(0, int(V_{first.size}))"
    elif first.kind == "cross":
        length = f"len(V_{first.arrays[0]}) * len(V_{first.arrays[1]})"
    else:
        length = f"len(V_{first.arrays[1] if first.kind == 'gather' else first.arrays[0]})"
    head = [f"def cluster_fn({', '.join('V_' + a for a in args)}):", f"    L = {length}"]
    inits, loop, outputs = [], [], []
    for i in members:
        b = bs[i]
        lvl, o = level[i], b.name
        names = {x: ref(x, lvl) for x in b.arrays + b.scalars}
        body = []
        if b.kind == "fold":
            head.append(f"    acc_{o} = 0.0")
            body.append(f"acc_{o} += {render(parse(b), names, False)}")
            outputs.append((o, f"acc_{o}"))
        elif b.kind == "filter":
            head.append(f"    c_{o} = 0")
            inits.append(f"        k_{o} = False")
            body.append(f"k_{o} = ({render(parse(b), names, False)}) != 0")
            body.append(f"if k_{o}:")
            body.append(f"    e_{o} = {names[b.arrays[0]]}")
            if o in materialise:
                body.append(f"    O_{o}[c_{o}] = e_{o}")
        else:
            if b.kind == "generate":
                expr = render(parse(b), dict(names, i="t"), False)
            elif b.kind == "cross":
                x, y = b.arrays
                head.append(f"    n_{o} = len(V_{y})")
                expr = render(parse(b), {x: ref(x, lvl, f"t // n_{o}"),
                                         y: ref(y, lvl, f"t % n_{o}")}, False)
            elif b.kind == "gather":
                head.append(f"    n_{o} = len(V_{b.arrays[0]})")
                expr = (f"V_{b.arrays[0]}[int(abs({names[b.arrays[1]]})) % n_{o}] "
                        f"if n_{o} > 0 else 0.0")
            else:
                expr = render(parse(b), names, False)
            body.append(f"e_{o} = float({expr})")
            if o in materialise:
                body.append(f"O_{o}[{index[lvl]}] = e_{o}")
        if b.kind != "fold":
            inits.append(f"        e_{o} = 0.0")
            if o in materialise:
                head.append(f"    O_{o} = np.empty(L)")
                count = index[i] if b.kind == "filter" else ("L" if lvl is None else index[lvl])
                outputs.append((o, f"O_{o}[:{count}]"))
        if lvl is None:
            loop += ["        " + line for line in body]
        else:
            loop += [f"        if k_{bs[lvl].name}:"] + ["            " + line for line in body]
    tail = [f"        if k_{bs[i].name}:\n            c_{bs[i].name} += 1"
            for i in members if bs[i].kind == "filter"]
    ordered = any("[c_" in line for line in loop)
    loop_range = "prange" if parallel and not ordered else "range"
    lines = head + [f"    for t in {loop_range}(L):"] + inits + loop + tail
    lines.append("    return (" + "".join(expr + ", " for _, expr in outputs) + ")")
    source = "import numpy as np\nfrom numba import prange\n\n\n" + "\n".join(lines) + "\n"
    return source, tuple(args), tuple(o for o, _ in outputs)


def _load(source: str, jit: bool):
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    module, _ = load_module("cluster", f"flamefuse_cluster_{digest}", source)
    if not jit:
        return module.cluster_fn
    return njit(module.cluster_fn, error_model="numpy", parallel="prange(L)" in source)


@dataclass(frozen=True)
class Compiled:
    program: Program
    steps: tuple[Step, ...]
    sources: tuple[str, ...]

    def run(self, inputs: dict) -> dict:
        p = self.program
        env = {k: (np.ascontiguousarray(v, dtype=np.float64) if k in p.array_params
                   else float(v)) for k, v in inputs.items()}
        for step in self.steps:
            if step.function is None:
                env.update(host_external(p.bindings[step.nodes[0]], env))
                continue
            env.update(zip(step.outputs, step.function(*(env[a] for a in step.args))))
        return {r: env[r] for r in p.returns}


def compile_program(clustering: Clustering, jit: bool = True, parallel: bool = False) -> Compiled:
    g = clustering.graph
    p = g.program
    where = clustering.cluster_of()
    bs = p.bindings
    materialise = {bs[a].name for (a, b) in g.edges if where[a] != where[b]} | set(p.returns)
    steps, sources = [], []
    for members in clustering.clusters:
        if bs[members[0]].kind == "external":
            steps.append(Step(members, None, (), ()))
            continue
        source, args, outputs = cluster_source(p, members, materialise, parallel)
        sources.append(source)
        steps.append(Step(members, _load(source, jit), args, outputs))
    return Compiled(p, tuple(steps), tuple(sources))
