"""Fused Numba kernels per chunk for ``dask.array`` code.

``optimize(*arrays) -> tuple`` (like ``dask.optimize``) returns equivalent
arrays whose graphs went through :func:`optimize_graph`; ``optimize_graph(dsk,
keys)`` is Dask's own array optimisation
(:func:`dask.array.optimization.optimize`: blockwise fusion, culling, linear
fusion) with one more step in the middle, and can be installed as Dask's hook:
``dask.config.set(array_optimize=flamefuse.dask.optimize_graph)``.

The step: Dask's blockwise fusion leaves, per chain of blockwise layers, one
``Blockwise`` layer whose task runs the chain's per-chunk tasks
(``_execute_subgraph``: the element-wise operations and, for a reduction, its
per-chunk ``chunk`` function such as ``sum(x, axis, keepdims=True)``).  That
task is rewritten to run the same per-chunk tasks on :mod:`flamefuse.lazy`
arrays (wrapping the chunks) and convert the result back to NumPy: the
run-time fusion records them and runs them as one generated Numba kernel per
chunk (the Weighted Subroutine Partition's ``greedy`` partitioner, the kernel
memory and disk caches of :mod:`flamefuse.runtime`), with temporaries
contracted; a reduction's partial per chunk comes out of that kernel and Dask's
tree reduction combines the partials as before.  Operations the lazy front
end does not fuse run in NumPy (its ``FallbackWarning`` says which).  Layers
whose per-chunk work is a single task (reading, random numbers, one
``concatenate``) are left alone.

flamefuse.lazy records into one process-wide recorder, so chunks are fused
one at a time per process (a lock); each fused kernel is itself parallel over
the Numba threads, so the cores stay busy under the threaded scheduler, and
each worker process of a cluster has its own recorder.
"""
from __future__ import annotations

import threading

import numpy as np

_LOCK = threading.RLock()


REDUCTIONS = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "amax": "max", "amin": "min",
              "chunk_max": "max", "chunk_min": "min", "nansum": None, "nanprod": None}


def _reduce(name, dtype, x, axis=None, keepdims=False, **kwargs):
    """A per-chunk reduction (``keepdims`` as Dask's chunk functions ask) on a lazy array: the
    lazy front end's reduction over all axes or one, reshaped to the kept dimensions."""
    import flamefuse.lazy as lazy
    from flamefuse.lazy.array import LazyArray
    axes = tuple(range(np.ndim(x))) if axis is None else tuple(a % np.ndim(x) for a in np.atleast_1d(axis))
    if not isinstance(x, LazyArray) or kwargs or (len(axes) > 1 and len(axes) != np.ndim(x)):
        return getattr(np, name)(_numpy(x), axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype else {}),
                                 **kwargs)
    one = None if len(axes) == np.ndim(x) else axes[0]
    out = getattr(lazy, name)(x, axis=one, **({"dtype": dtype} if dtype is not None and name in ("sum", "prod")
                                               else {}))
    if dtype is not None and out.dtype != dtype:
        out = out.astype(dtype)
    if not keepdims:
        return out
    shape = tuple(1 if d in axes else n for d, n in enumerate(np.shape(x)))
    return np.asarray(out).reshape(shape)


def _numpy_call(func, *args, **kwargs):
    """``func`` on NumPy arrays: lazy arguments are computed first (anything not fused)."""
    return func(*[_numpy(a) for a in args], **{k: _numpy(v) for k, v in kwargs.items()})


def _adapt(task):
    """The per-chunk task as it runs on lazy arrays: ufuncs and operators as they are (recorded),
    reductions through ``_reduce``, any other function on NumPy arrays."""
    import functools
    import operator

    from dask._task_spec import Task, _execute_subgraph
    if not isinstance(task, Task):
        return task
    func, args, kwargs = task.func, tuple(_adapt(a) for a in task.args), task.kwargs
    if func is _execute_subgraph:          # a blockwise layer fused into this one: its tasks too
        return Task(task.key, _execute_adapted, *args, **kwargs)
    inner = func.func if isinstance(func, functools.partial) else func
    bound = dict(func.keywords) if isinstance(func, functools.partial) else {}
    if isinstance(inner, np.ufunc) or getattr(operator, getattr(inner, "__name__", ""), None) is inner:
        return Task(task.key, func, *args, **kwargs)
    name = REDUCTIONS.get(getattr(inner, "__name__", ""))
    if name and not (isinstance(func, functools.partial) and func.args) and set(bound) <= {"dtype"}:
        return Task(task.key, functools.partial(_reduce, name, bound.get("dtype")), *args, **kwargs)
    return Task(task.key, functools.partial(_numpy_call, func), *args, **kwargs)


def _execute_adapted(inner, outkey, inkeys, *deps):
    from dask._task_spec import _execute_subgraph
    return _execute_subgraph({k: _adapt(t) for k, t in inner.items()}, outkey, inkeys, *deps)


def _run_lazy(inner, outkey, inkeys, *deps):
    """The per-chunk tasks of a fused blockwise layer on lazy arrays, the result as NumPy."""
    from dask._task_spec import _execute_subgraph

    import flamefuse.lazy as lazy
    adapted = {k: _adapt(t) for k, t in inner.items()}
    with _LOCK:
        wrapped = [lazy.asarray(d) if isinstance(d, np.ndarray) and d.dtype.kind in "biufc" else d for d in deps]
        out = _execute_subgraph(adapted, outkey, inkeys, *wrapped)
        return _numpy(out)


def _numpy(out):
    from flamefuse.lazy.array import LazyArray
    if isinstance(out, LazyArray):
        return np.asarray(out)
    if isinstance(out, (tuple, list)):
        return type(out)(_numpy(x) for x in out)
    if isinstance(out, dict):
        return {k: _numpy(v) for k, v in out.items()}
    return out


def _fusable(layer) -> bool:
    from dask._task_spec import Task, _execute_subgraph
    task = getattr(layer, "task", None)
    return isinstance(task, Task) and task.func is _execute_subgraph and len(task.args[0]) >= 2


def _rewrite(layer):
    from dask._task_spec import Task
    from dask.blockwise import Blockwise
    t = layer.task
    task = Task(t.key, _run_lazy, *t.args, **t.kwargs)
    return Blockwise(layer.output, layer.output_indices, task, layer.indices, layer.numblocks,
                     concatenate=layer.concatenate, new_axes=layer.new_axes, output_blocks=layer.output_blocks,
                     annotations=layer.annotations, io_deps=layer.io_deps)


def fuse_chunks(graph):
    """The HighLevelGraph with every fused blockwise layer's task run on lazy arrays."""
    from dask.blockwise import Blockwise
    from dask.highlevelgraph import HighLevelGraph
    layers = {name: _rewrite(layer) if isinstance(layer, Blockwise) and _fusable(layer) else layer
              for name, layer in graph.layers.items()}
    return HighLevelGraph(layers, graph.dependencies, getattr(graph, "key_dependencies", None))


def optimize_graph(dsk, keys, **kwargs):
    """Dask's array optimisation with the per-chunk kernels (usable as ``array_optimize``)."""
    from dask import config
    from dask.array.optimization import fuse_roots, optimize_blockwise
    from dask.core import flatten
    from dask.highlevelgraph import HighLevelGraph
    keys = list(flatten(keys if isinstance(keys, (list, set)) else [keys]))
    if not isinstance(dsk, HighLevelGraph):
        dsk = HighLevelGraph.from_collections(id(dsk), dsk, dependencies=())
    dsk = optimize_blockwise(dsk, keys=keys)
    dsk = fuse_chunks(dsk)
    dsk = fuse_roots(dsk, keys=keys)
    dsk = dsk.cull(set(keys))
    if config.get("optimization.fuse.active") is False:
        return dsk
    from dask._task_spec import convert_legacy_graph, fuse_linear_task_spec
    from dask.array.optimization import _optimize_slices
    from dask.utils import ensure_dict
    out = convert_legacy_graph(ensure_dict(dsk))
    out = fuse_linear_task_spec(out, keys=keys)
    return _optimize_slices(out)


def optimize(*arrays):
    """Equivalent dask arrays whose graphs are optimised with per-chunk kernels (see the module doc)."""
    import dask.array as da
    from dask.blockwise import optimize_blockwise
    from dask.core import flatten
    out = []
    for a in arrays:
        if not isinstance(a, da.Array):
            out.append(a)
            continue
        graph = fuse_chunks(optimize_blockwise(a.__dask_graph__(), keys=list(flatten(a.__dask_keys__()))))
        out.append(da.Array(graph, a.name, a.chunks, meta=a._meta))
    return tuple(out)
