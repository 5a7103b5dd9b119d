"""flamefuse: a loop-fusion algorithm synthesizer for FLAME-style dense linear algebra.

Pipeline (each stage a package of plain functions over immutable values):

* :mod:`flamefuse.spec`    -- load YAML specs, library operations -> tasks
* :mod:`flamefuse.pme`     -- regions, states, tasks; the reference term syntax
* :mod:`flamefuse.search`  -- strips, CP-SAT model, enumeration, explanations
* :mod:`flamefuse.derive`  -- loop bodies from fused invariants
* :mod:`flamefuse.codegen` -- the kernel IR, blocked Numba kernels
* :mod:`flamefuse.pipeline` -- ``synthesize(problem)``: search, derivation, kernel IR, once
* :mod:`flamefuse.runtime`, :mod:`flamefuse.lazy` -- run-time fusion of array code
* :mod:`flamefuse.synth`   -- recorded NumPy/SciPy linear-algebra calls run as synthesized kernels
* :mod:`flamefuse.cluster` -- clustering with filters by integer programming
* :mod:`flamefuse.loopnest` -- fusion conflict graph, reductions
* :mod:`flamefuse.present` -- LaTeX and SVG of derived algorithms
* :mod:`flamefuse.dask`    -- tile task graphs and per-chunk kernels on Dask
* :mod:`flamefuse.cli`     -- the ``flamefuse`` commands (the top layer: no stage imports it)

Shared by all: :mod:`flamefuse.jit` (the one way into Numba), :mod:`flamefuse.store` (the one
cache store; :mod:`flamefuse.cache` imports its generated modules), :mod:`flamefuse.switches`
(every ``FLAMEFUSE_*`` switch), :mod:`flamefuse.timing` (the timing harness),
:mod:`flamefuse.machine` (the machine identity), :mod:`flamefuse.unionfind`,
:mod:`flamefuse.errors` (errors at the CLI edge).
The layers and which way imports flow: ``docs/architecture.md``.
"""
__version__ = "0.1.0"
