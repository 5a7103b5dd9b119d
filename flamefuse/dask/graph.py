"""``kernel(spec, variant=None)``: a derived fused loop as a function of Dask arrays.

The function (:class:`TileKernel`) takes the spec's operands in spec order as
Dask arrays (NumPy arrays are wrapped with ``chunks=``), builds the tile
tasks of :mod:`flamefuse.dask.plan` for their chunking and returns, lazily,
what the generated module's SciPy-style function returns (the operands
written and not consumed, in the form of their last writer: a lower factor
with zeros above, a full symmetric matrix, or as computed), one Dask array
each, a tuple when more than one.

Chunking: the chunks of the first operand's partitioned dimension are the
tiles (the chunk is the block size; a ragged last chunk, or a chunk that does
not divide n, is just a smaller tile).  Where an operand's other dimension, or
a later operand's partitioned dimension, is chunked differently it is
rechunked to match (one rechunk layer, said in ``TileKernel.notes``); a
non-square matrix where the spec needs a square one, a wrong number of
dimensions, a size that does not match or a non-numeric dtype raise
``ValueError``/``TypeError`` saying what to pass.  dtype: float32, float64,
complex64, complex128 (Hermitian semantics), integers as float64.

Keys: the tile tasks are ``(<spec>-tiles-<token>, i)``; the outputs
``(<spec>-<operand>-<token>, r, c)`` (vectors ``(name, r)``).  The graph is
the same for every scheduler (threaded, processes, ``distributed``).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flamefuse.codegen.ir import Kernel
from flamefuse.codegen.scipy_style import returned
from flamefuse.derive.evaluate import Unsupported
from flamefuse.dask import tiles
from flamefuse.dask.plan import Plan, contract, plan
from flamefuse import shipped
from flamefuse.errors import fail
from flamefuse.pme.model import Problem


def spec_path(spec) -> Path:
    """A spec given as a path, or the name of a shipped spec (:func:`flamefuse.shipped.spec_path`)."""
    return shipped.spec_path(spec)


@functools.lru_cache(maxsize=None)
def derived(spec: str) -> tuple[Problem, tuple, dict]:
    """(problem, ((variant, past count, Kernel), ...), not derived: variant -> reason), from
    the spec's synthesis (:func:`flamefuse.pipeline.synthesize`)."""
    from flamefuse.pipeline import synthesize
    from flamefuse.spec import load
    synthesis = synthesize(load(spec_path(spec)))
    problem, made, skipped = synthesis.problem, synthesis.made, synthesis.skipped
    if not made:
        fail(f"no tile graph for {problem.name}: no invariant can be derived",
             hint="; ".join(f"{k}: {v}" for k, v in skipped.items()) or "the problem has no fused invariant")
    return problem, tuple(made), skipped


def _precision(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.char in "fdFD":
        return dtype
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    raise TypeError(f"operands must hold numbers of a LAPACK precision (float32, float64, complex64, "
                    f"complex128; integers become float64), got dtype {dtype}")


@dataclass(frozen=True)
class TileKernel:
    """A spec's derived loop (one variant) as a function of Dask arrays (see the module doc)."""
    problem: Problem
    ir: Kernel
    variant: str
    contract: bool = True     # merge each tile's chains of updates (plan.contract)

    @property
    def name(self) -> str:
        return self.problem.name

    def prepare(self, *arrays, chunks=None):
        """(Dask arrays chunked as tiles, the tile counts per operand, notes on what was changed)."""
        import dask.array as da
        ops = self.problem.operands
        if len(arrays) != len(ops):
            raise TypeError(f"{self.name} takes {len(ops)} operands ({', '.join(o.name for o in ops)}), "
                            f"got {len(arrays)}")
        arrs = [x if isinstance(x, da.Array) else da.from_array(np.asarray(x), chunks=chunks or "auto")
                for x in arrays]
        dtype = np.result_type(*[_precision(x.dtype) for x in arrs])
        first, notes, out = ops[0], [], []
        for o, x in zip(ops, arrs):
            want = 1 if o.kind == "vector" else 2
            if x.ndim != want:
                raise ValueError(f"{o.name} must be a {want}-D array, got shape {x.shape}")
            if o.kind == "matrix" and o.partition == "2x2" and x.shape[0] != x.shape[1]:
                raise ValueError(f"{o.name} must be square, got shape {x.shape}")
        grid_dim = 1 if first.partition == "columns" else 0
        grid = arrs[0].chunks[grid_dim]
        n = arrs[0].shape[grid_dim]
        for o, x in zip(ops, arrs):
            dim = 1 if o.partition == "columns" else 0
            if x.shape[dim] != n:
                raise ValueError(f"{o.name} has dimension {x.shape[dim]} where {first.name} has {n}: "
                                 "the sizes must match")
            want = list(x.chunks)
            want[dim] = grid
            if o.kind == "matrix" and o.partition == "2x2":
                want[1 - dim] = grid
            want = tuple(want)
            if want != x.chunks:
                notes.append(f"{o.name} rechunked from {x.chunks} to square tiles {want} "
                             f"(pass {o.name}.rechunk({grid[0]}) to choose)")
                x = x.rechunk(want)
            out.append(x.astype(dtype) if x.dtype != dtype else x)
        shape = {o.name: (len(x.chunks[0]), len(x.chunks[1]) if x.ndim == 2 else 1) for o, x in zip(ops, out)}
        return out, shape, notes, dtype

    def plan(self, *arrays, chunks=None) -> Plan:
        """The tile tasks for these operands' chunking."""
        _, shape, _, _ = self.prepare(*arrays, chunks=chunks)
        return self._plan(shape)

    def _plan(self, shape: dict) -> Plan:
        first = self.problem.operands[0]
        p = plan(self.ir, shape[first.name][1 if first.partition == "columns" else 0], shape)
        return contract(p) if self.contract else p

    def __call__(self, *arrays, chunks=None):
        outs = self.graph(*arrays, chunks=chunks)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def graph(self, *arrays, chunks=None) -> list:
        """The output Dask arrays (always a list)."""
        from dask.base import tokenize
        arrs, shape, notes, dtype = self.prepare(*arrays, chunks=chunks)
        p = self._plan(shape)
        token = tokenize(self.name, self.variant, [x.name for x in arrs], str(dtype))
        return build(self.problem, p, dict(zip((o.name for o in self.problem.operands), arrs)), token, dtype)


def _offsets(chunks) -> list:
    return list(np.cumsum((0,) + tuple(chunks))[:-1])


def build(problem: Problem, p: Plan, arrays: dict, token: str, dtype) -> list:
    """The Dask arrays of ``problem``'s results from the plan ``p`` over ``arrays`` (name -> array)."""
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph
    vec = {o.name: o.kind == "vector" for o in problem.operands}
    tname = f"{problem.name}-tiles-{token}"
    results = returned(problem)
    outname = {name: f"{problem.name}-{name.lower()}-{token}" for name, _ in results}

    def in_key(name, r, c):
        return (arrays[name].name, r) if vec[name] else (arrays[name].name, r, c)

    def out_key(name, r, c):
        return (outname[name], r) if vec[name] else (outname[name], r, c)

    # the task whose version is the final one of a returned tile that needs no finishing takes the output key
    form = dict(results)
    rename = {}
    for (name, r, c), version in p.final.items():
        if name in form and version[0] == "t" and (form[name] not in ("lower", "symmetric", "upper") or r != c) \
                and not (form[name] in ("lower", "symmetric") and r < c):
            rename[version] = out_key(name, r, c)

    def key(version):
        if version[0] == "in":
            return in_key(*version[1:])
        return rename.get(version, (tname, version[1]))

    dsk = {}
    row0 = {name: _offsets(a.chunks[0]) for name, a in arrays.items()}
    dstr = np.dtype(dtype).str
    for i, t in enumerate(p.tasks):
        fn = functools.partial(tiles.run_task, t.steps, int(row0[t.target[0]][t.target[1]]), dstr)
        dsk[key(("t", i))] = (fn, key(t.source)) + tuple(key(v) for v in t.inputs)
    outs = []
    for name, f in results:
        a = arrays[name]
        nr, nc = len(a.chunks[0]), (len(a.chunks[1]) if a.ndim == 2 else 1)

        def final(r, c):
            return key(p.final.get((name, r, c), ("in", name, r, c)))
        for r in range(nr):
            for c in range(nc):
                k = out_key(name, r, c)
                if k in dsk:
                    continue
                if f in ("lower", "symmetric") and r < c:
                    dsk[k] = (functools.partial(tiles.zeros, (a.chunks[0][r], a.chunks[1][c]), dstr),) \
                        if f == "lower" else (tiles.mirror, final(c, r))
                elif f in ("lower", "symmetric", "upper") and r == c:
                    fn = {"lower": tiles.lower_form, "symmetric": tiles.symmetric_form, "upper": tiles.upper_form}[f]
                    dsk[k] = (fn, final(r, c))
                else:
                    dsk[k] = (tiles.same, final(r, c))
        graph = HighLevelGraph.from_collections(outname[name], dsk, dependencies=list(arrays.values()))
        outs.append(da.Array(graph, outname[name], a.chunks, dtype))
    return outs


def kernel(spec, variant: str | None = None, *, contract: bool = True) -> TileKernel:
    """The tile-graph function of ``spec`` (a shipped spec name or a path); ``variant`` a
    generated variant name (``spd_inverse_v1``) or its number (1); None: the module's DEFAULT
    (the derivable invariant with the most past tasks).  ``contract``: merge each tile's chains
    of updates whose intermediate versions nothing else reads into one task
    (:func:`flamefuse.dask.plan.contract`); False: one task per statement and tile."""
    problem, made, skipped = derived(str(spec))
    names = [m[0] for m in made]
    if variant is None:
        chosen = max(made, key=lambda m: m[1])
    else:
        want = f"{problem.name}_v{variant}" if isinstance(variant, int) or str(variant).isdigit() else str(variant)
        found = [m for m in made if m[0] == want]
        if not found:
            why = f" ({skipped[want]})" if want in skipped else ""
            raise ValueError(f"unknown or underivable variant {variant!r} of {problem.name}{why}: "
                             f"choose one of {', '.join(names)}")
        chosen = found[0]
    try:
        plan(chosen[2], 2)       # the statements all have a tile form
    except Unsupported as why:
        tileable = [m[0] for m in made if _tileable(m[2])]
        fail(f"no tile graph for {chosen[0]}: {why}",
             hint=f"tileable variants: {', '.join(tileable)}" if tileable else
             "use a spec without pivoting (lu_nopiv, general_inverse_nopiv) or the generated module in one process")
    return TileKernel(problem, chosen[2], chosen[0], contract)


def _tileable(ir: Kernel) -> bool:
    try:
        plan(ir, 2)
        return True
    except Unsupported:
        return False
