"""Compiled loops: Python loops of scalar and short-slice NumPy operations, run compiled.

A loop such as PolyBench's Cholesky written in Python (``for i in range(1, n): for j in
range(i): A[i, j] -= np.dot(A[i, :j], A[j, :j]); A[i, j] /= A[j, j] ...``) does hundreds of
thousands of NumPy calls on a few elements each; NumPy's cost per call (about 1 us) is the
whole run time, and recording such calls for fusion costs more. ``flamefuse fuse script.py``
(in its fused and its plain-NumPy mode alike) compiles such loops *as they stand*: the same
algorithm, the same operations in the same order, so the same bits as NumPy (issue 29 items 1
and 4; docs/loop-recognition.md, "Step 1 built").

How, in four parts, one module each:

1. :mod:`flamefuse.loops.extract` -- which loops qualify, from the script's source (AST): a
   ``for v in range(...)`` nest in a function or at module level whose statements are
   assignments to names and array subscripts, ``if`` and inner ``range`` loops; arithmetic
   ``+ - * /``, comparisons, ``np.sqrt``, ``abs``, ``min``/``max`` of two, ``np.dot`` and ``@`` of 1-D slices of any
   stride (each computed by NumPy exactly rounded, or, for dots, by NumPy's own BLAS call);
   slice statements on 1-D and 2-D views (``a[k + 1:, k:] -= f[:, None] * a[k, k:]``,
   ``A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])``: element-wise ``+ - * /``, ``np.sqrt``,
   ``abs``, NumPy's broadcasting where it is static, ``None`` axes), products of a vector and
   a matrix (``R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]``: NumPy's own ``cblas_dgemv`` call or
   loop) and local arrays computed in the loop (``f = a[k + 1:, k] / a[k, k]``); in a function,
   no name the loop assigns is used outside it (a later loop's own loop variable of the same name aside).
   Anything else (a transcendental function, ``**``, ``//``, a call of the script's own
   function, ``break``, a list ``append``, a product of two matrices...) leaves the loop as it
   is, and the loops inside it are looked at in turn.
2. :mod:`flamefuse.loops.rewrite` -- the script's code with each such loop behind a guard:
   ``if not _flamefuse_loops(site, args): <the loop as written>``.
3. :mod:`flamefuse.loops.guard` -- at each execution: the arguments' types (exact float64
   ``ndarray``s, C-contiguous, no memory shared between a written array and another one;
   Python ints or ``np.int64`` below 2**31; floats), the library for those types, a copy of
   every written array, the call with the floating-point flags cleared; if the compiled loop raised (an index out of range) or
   raised a flag NumPy would warn about (divide by zero, overflow, invalid), the arrays are
   restored and the loop runs as written: the user sees Python's and NumPy's own errors and
   warnings, exactly. (A scalar division by zero stops the compiled loop itself, and every
   value it computes is kept from LLVM's dead-code removal, so no flag is lost:
   :mod:`flamefuse.loops.numba_parts`.)
4. :mod:`flamefuse.loops.render` and :mod:`flamefuse.loops.code` -- the loop rendered as a
   Numba function for the argument types (names prefixed, dots and vector-matrix products as
   NumPy computes them: :mod:`flamefuse.loops.numba_parts`, NumPy's own ``cblas_ddot`` and
   ``cblas_dgemv`` from :mod:`flamefuse.loops.blas`; a slice statement element by element, with
   no fused multiply-add, straight into its target where a run-time test proves no operand view
   shares an element with it, else through a temporary first, as NumPy's own evaluation of the
   right side before it writes), built as a native library like every fused kernel
   (:mod:`flamefuse.runtime.native`: trusted private cache, digest sidecar; compiled by the
   background compiler, :mod:`flamefuse.runtime.compiler`, while the first run runs the loop as
   written). A warm run loads the library with ``ctypes`` and never imports Numba.

Kept: the rewritten code and the sites (:mod:`flamefuse.loops.site`) per script, and each
loop's rendered text per signature, are entries of the store (kind ``loops``,
:mod:`flamefuse.loops.kept`): a warm ``flamefuse fuse`` run does no AST pass.

Loops at module level (a script's top-level code, ``if __name__ == "__main__":`` blocks, the
inner loops of a ``for _ in range(repeats):`` that does not qualify itself): their names are the
module's globals, which code after the loop and functions called later read, so after a
compiled call every name the loop assigns holds what running it as written would have left, of
the same type, and a loop that ran zero times binds nothing (:mod:`flamefuse.loops.scope`):
loop variables are ints whose final values the guard recomputes from the loops' own ``range``
expressions; any other name the loop assigns (``t = x[i] * 2``, an accumulator ``s``) makes the
compiled part stop one iteration of the outermost loop short, and Python runs that last
iteration as written, setting those names itself. Refused (the reason in ``--explain``): a name
assigned in the loop and read before it is set in an iteration (a value carried from one
iteration to the next), one assigned only under an ``if``, an inner loop under an ``if`` or
whose ``range`` reads a name the loop assigns, one variable for two loops, such names inside
``try``/``with``, a script calling ``exec``/``eval``, loops in class bodies. At run time the
guard checks the code runs with the module's globals as its locals (not an ``exec`` with two
mappings) and that ``range`` gave a ``range``.

Switches: ``FLAMEFUSE_LOOPS=0`` turns the whole mechanism off (the script is compiled as
written); ``FLAMEFUSE_NATIVE=0`` too leaves every loop as written; ``FLAMEFUSE_COMPILE=inline``
builds a loop's library in the script's process at its first call (the tests' setting).
``flamefuse fuse --explain`` prints one line per loop site: compiled (calls compiled, calls run
as written and why) or refused and why; the summary counts them.

Not bit-exact beyond NumPy's own guarantees: NaN payloads (a NaN is a NaN, its bits may differ
where NumPy's SIMD loops would order operands differently).
"""
