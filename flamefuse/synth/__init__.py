"""flamefuse.synth: NumPy/SciPy linear-algebra call sequences run as synthesized fused kernels.

Where the two halves of flamefuse meet: under ``flamefuse fuse`` (or with
:mod:`flamefuse.lazy` arrays) the calls ``numpy.linalg.cholesky / inv /
solve``, ``scipy.linalg.cholesky / cho_factor / cho_solve /
solve_triangular / lu_factor / lu_solve / inv`` and matrix @ matrix
products are recorded (:mod:`flamefuse.lazy.linalg`,
:mod:`flamefuse.lazy.scipy_linalg`), and at the next sync point the
recorded calls of a stage run here:

1. :mod:`.translate` maps each call, by the structure of its operands, to
   library operations (``chol``, ``trinv``, ``ltl``, ``trsm``, ``trsm_lt``,
   ``lu``, ``trsm_unit``, ...) on buffers. Structure comes from the data
   flow (the result of ``cholesky`` is lower triangular, ``inv`` of it is a
   ``trinv``, ``L.T @ L`` of it an ``ltl``, ``X.T @ X`` is symmetric) or, for
   matrices from outside the chain, from an exact run-time check
   (:mod:`.structure`);
2. :mod:`.group` collects consecutive operations into one open chain,
   overwriting a value in place only when the script can no longer see it;
3. :mod:`.chain` turns a chain into the Problem of the spec a person would write
   (through the spec loader's binding functions) and :mod:`.kernels` searches its fused
   invariants, derives and emits the kernel module with
   :mod:`flamefuse.codegen` (the code path of ``generated/*.py``) and keeps
   it in the user cache folder ``synth``, named by the chain's structure; a call
   whose chain derives no kernel runs one LAPACK call (:mod:`.eager`), and a chain of
   products ``X @ P @ ... @ P`` no one sees the middle of runs by repeated squaring
   (:mod:`.power`);
4. the longest prefixes of a chain that are connected by shared operands
   (:func:`.segment.connected`) and have a fused invariant run as one kernel
   each (a piece that fuses nothing and that LAPACK does faster -- a lone
   Cholesky, a lone solve of one right-hand side -- as LAPACK's routine,
   :func:`.group.lapack_alone`); calls nothing matches run as the script's
   own NumPy/SciPy call;
   results take NumPy's form (:mod:`.fill`), failures raise ``LinAlgError``
   (a call that may raise is run by :mod:`flamefuse.lazy.linalg` at the
   call itself, alone, so the error is raised at the script's statement);
   "no fused loop" answers are kept in the cache too (:mod:`.kernels`); a
   call alone in its group that ran as LAPACK calls only is remembered by its
   structure, and the next call of that structure runs those calls straight
   away, without the group (:mod:`.direct`);
5. :mod:`.explain` keeps the ``linalg:`` lines ``flamefuse fuse --explain``
   prints.

The user documentation is docs/linalg-synthesis.md.
"""
