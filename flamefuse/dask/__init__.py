"""flamefuse on Dask: fused tile algorithms as task graphs, fused kernels per chunk.

Nothing here schedules anything: the graphs run on Dask's schedulers (threaded,
processes, synchronous, ``distributed`` clusters) like any ``dask.array`` code.

**Tile task graphs.** ``kernel(spec, variant=None, contract=True) -> TileKernel``
takes a shipped spec name (``"spd_inverse"``) or a YAML path, derives its fused
loops exactly as ``flamefuse derive --emit`` does (the same
:class:`flamefuse.codegen.ir.Kernel` the Numba kernels are rendered from) and
returns a function of Dask arrays::

    import dask.array as da
    from flamefuse.dask import kernel
    A = da.from_array(a, chunks=512)          # square chunks: the chunk is the block size
    Ainv = kernel("spd_inverse")(A)           # lazy; Ainv.compute() on any scheduler
    X = kernel("chol_trsm")(A, B)             # L X = B with A = L L^T, one fused graph

It returns what the generated module's SciPy-style function returns (a full
symmetric inverse, a lower factor with zeros above, the solution), one array
each.  How the graph is built (:mod:`.plan`): the loop runs symbolically over
the tiles; at iteration k the 3x3 repartition's blocks 0 / 1 / 2 are the tiles
before / at / after k, and every body statement becomes one task per target
tile it writes (``potrf trsm syrk gemm trtri lauum trmm triacc copy lu ul``; a
triangle of several tiles is solved or multiplied by block substitution).
Tiles are versions, so the dependences are the data flow.  With ``contract``
each tile's chain of updates whose intermediate versions nothing else reads
becomes one task (fewer tasks and transfers, the same steps in the same order).
Each task runs the generated modules' own Numba routines (BLAS/LAPACK through
SciPy's Cython pointers) on its tiles (:mod:`.tiles`), one BLAS thread per call.
Pivoted LU variants and steps after the loop have no tile form: ``kernel``
says so (``FlameError`` with the tileable variants).  Chunking, dtypes and
errors: :mod:`.graph`.  ``TileKernel.plan(*arrays)`` is the task list,
:func:`.picture.plan_svg` draws it, :func:`.metrics.graph_stats` counts tasks
and the critical path, :func:`.metrics.moved_bytes` the bytes workers sent.

**Fused kernels per chunk.** ``optimize(*arrays)`` (like ``dask.optimize``)
returns equivalent arrays whose fused blockwise layers run their per-chunk work
on :mod:`flamefuse.lazy` arrays: one generated Numba kernel per chunk (the
run-time partitioner and kernel caches), reductions as Dask's tree reduction of
the fused per-chunk partials.  ``optimize_graph`` is the same as Dask's
``array_optimize`` hook: ``dask.config.set(array_optimize=optimize_graph)``.
See :mod:`.chunks`.

**Command line.** ``flamefuse tiles SPEC --n N --chunk C`` runs a spec's graph on
a new ``distributed.LocalCluster`` (one single-threaded worker per core), on
``--scheduler ADDRESS`` (an existing cluster) or ``--scheduler threads``, and
checks it against the generated module (:mod:`flamefuse.cli.tiles`).  Benchmarks:
``flamefuse bench dask_tiles`` (fused vs unfused tile graphs vs
``dask.array.linalg`` vs LAPACK) and ``flamefuse bench dask_fuse``
(Black-Scholes per-chunk kernels vs Dask's optimisation); docs/scale-out.md.

Requires the ``dask`` extra (``pip install flamefuse[dask]``: ``dask[array,distributed]``).
"""
from flamefuse.dask.graph import TileKernel, kernel
from flamefuse.dask.chunks import optimize, optimize_graph

__all__ = ["TileKernel", "kernel", "optimize", "optimize_graph"]
