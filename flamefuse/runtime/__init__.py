"""flamefuse.runtime: Bohrium-style fusion of recorded array operations.

Input: a :class:`~flamefuse.runtime.program.Program` -- the operations a
lazy front end (:mod:`flamefuse.lazy`) recorded between two sync points, with
array operands numbered by first use and given as strided
:class:`~flamefuse.runtime.views.View` s of flat base arrays.

Pipeline (plain functions over frozen values):

* :mod:`.views`     -- ``View`` (optionally wrapped along axes: ``np.roll`` read in
  place, ``rolled``); ``overlap(a, b)`` (sound strided overlap test);
  ``grid(size, views)`` (the C-contiguous reshape a kernel indexes a base by).
* :mod:`.program`   -- ``Ref``, ``Scalar``, ``Op``, ``BaseInfo``, ``Program``.
* :mod:`.graph`     -- ``build(program) -> Graph`` (dependency edges RAW/WAR/WAW,
  forbidden pairs, per-op resources); ``cost(graph, blocks)`` in bytes of
  external accesses with array contraction; ``is_legal``; ``topo_order``.
* :mod:`.partition` -- ``PARTITIONERS`` (singleton, linear, greedy, unintrusive,
  optimal, cpsat); ``partition(graph, name)`` returns legal blocks in
  dependency order; ``partition_costs(graph)`` each partitioner's cost;
  ``optimal_search(graph)`` also says whether optimality was proved.
* :mod:`.cpsat`     -- ``solve(graph)``: the exact CP-SAT model.
* :mod:`.kernel`    -- ``generate(program, block, contracted) -> Kernel`` (a
  :class:`~.code.Code` value and its arguments: one loop nest, chunks of the outer
  dimension, privatised reductions, each base one C-contiguous array argument with
  affine subscripts; offsets, extents and scalars are arguments, so kernels are
  keyed by structure); ``compile_kernel(source)`` with memory and on-disk
  caches (``$FLAMEFUSE_CACHE_DIR`` or ``~/.cache/flamefuse``).
* :mod:`.code`      -- ``Code``, a kernel as an immutable value (parameters, chunk
  count, buffers, chunk body, combining step), and its two renderers side by side:
  ``njit_module`` (``Code.source``) and ``native_entry`` (the C-ABI entry).
* :mod:`.native`    -- the same kernels as native shared libraries (the C-ABI entry
  compiled by Numba, linked by ``cc``, loaded by ``ctypes``):
  ``signature(args)``, ``find(source, sig)`` (a launcher or None),
  ``want(code, sig)``/``build_wanted``; a warm run never imports Numba.
* :mod:`.recorded`  -- ``Recorded``: one recorded operation (a named tuple).
* :mod:`.sites`     -- the script's line of a recorded op (``here()``, kept in ``Recorded.site``)
  and NumPy's calls and warnings made as if at it (``at_site``, ``warn_at``): a flush's
  warnings name each op's own line (:class:`.numpy_program.Caught`).
* :mod:`.execute`   -- ``plan_for(program, partitioner)`` (merge cache keyed by
  the program's structure; long programs partitioned in windows cut at loop
  boundaries, each window's partition memoised by its canonical form) and
  ``run(program, plan, buffers, scalars)`` (temporaries pooled between their first
  and last kernel; each step's first call picks its native library, else Numba).
* :mod:`.compiler`  -- ``FLAMEFUSE_COMPILE=background`` (the default): a kernel with no native
  library yet is wanted (``library(code, sig)``) and built by one detached low-priority process
  (:mod:`flamefuse.synth.worker`) while its flush runs as NumPy's calls
  (:mod:`.numpy_program`: ``run(program, buffers, scalars)``, ``ndview``); ``wait()``.
* :mod:`.plan_cache` -- plans kept on disk between processes (a warm run skips
  partitioning and code generation); :mod:`.preload` -- the kernels a script used last
  time, loaded in the background while it starts again.
* :mod:`.summation` -- the order in which kernels add a float sum's terms (blocked, then
  pairwise: an error of the same order as NumPy's).
* :mod:`.pool`      -- ``take``/``give``: freed large buffers reused by size and
  dtype (no page faults for a loop's per-iteration temporaries).
* :mod:`.products`  -- ``Product`` (matvec, vecmat, outer on numbered bases);
  ``shares_a_matrix(products)``; ``run_blas(products, buffers)``: each product
  NumPy's call (gemv), for a group that no loop nest would make one pass of.
* :mod:`.linalg`    -- ``run_group(products, buffers)`` runs a group as one fused
  :mod:`flamefuse.loopnest` kernel (one pass over a matrix read as ``A`` and
  ``A.T``) and returns it.
* :mod:`.filters`   -- stages with boolean-mask selections (or every stage with
  the ``cluster`` partitioner of :func:`flamefuse.lazy.configure`) as a
  combinator program clustered by :mod:`flamefuse.cluster`'s ILP, one Numba
  loop per cluster (:mod:`.filter_program`, :mod:`.filter_kernel`).
* ``flamefuse fuse script.py`` is :mod:`flamefuse.cli.fuse`.
"""
__all__ = ["PARTITIONERS", "build", "cost", "is_legal", "partition_costs"]


def __getattr__(name):
    """``build``, ``cost``, ``is_legal`` (:mod:`.graph`), ``PARTITIONERS``, ``partition_costs``
    (:mod:`.partition`), imported at first use: ``flamefuse fuse`` of a script that runs as plain
    NumPy (:mod:`.adapt`) needs neither."""
    if name in ("build", "cost", "is_legal"):
        from flamefuse.runtime import graph
        return getattr(graph, name)
    if name in ("PARTITIONERS", "partition_costs"):
        from flamefuse.runtime import partition
        return getattr(partition, name)
    raise AttributeError(f"module 'flamefuse.runtime' has no attribute {name!r}")
# Importing this package (and flamefuse.lazy) loads neither OR-Tools (only the cpsat partitioner,
# :mod:`.cpsat`), nor SciPy/loop nests (:mod:`.linalg`, at the first group of products that read
# one matrix), nor the clustering ILP (:mod:`.filters`, at the first stage with a selection).
