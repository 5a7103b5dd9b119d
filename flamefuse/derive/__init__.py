"""Derivation: from a fused invariant to the body of a blocked loop (loop-derivation.md).

``derive_solution(problem, invariant) -> DerivedLoop | NotDerivable``

For each operation of ``problem`` and its past tasks in ``invariant``
(:class:`flamefuse.pme.invariant.Invariant`):

1. the traversal direction: TL->BR when the past ``op`` tasks write top/left
   regions, BR->TL for bottom/right;
2. the past tasks are refined into fine block tasks on the 3x3 grid twice,
   under the *before* grouping (split after block 0 for TL->BR) and the
   *after* grouping (split after block 1), by :mod:`flamefuse.derive.evaluate`
   (recursion through the library operation's own exact PME, block
   substitution and block products for the auxiliary kernels);
3. the update is After \\ Before, ordered by the versions each fine task
   reads and writes (flow and anti-dependences).  Where the rules leave a
   choice (which of two tasks that read each other through ``any`` runs
   first; whether a block solve is distributed over a sum; whether a product
   with an inverted region ``X * inv(Z)`` is read as the solve ``X / Z``, so
   a diagonal block is solved with before it is inverted, as in LAPACK's
   trtri) the options of ``loop.OPTIONS`` are tried in order (solves first)
   and the first that derives wins.
   When no option derives mechanically because the before-state holds a
   term the after-state lacks (an update that must cancel it), the options
   are tried again through the block algebra of :mod:`.algebra`: every
   block's value before and after the step is followed on random
   instantiations of the blocks (:mod:`.values`), and the update of each such
   block is searched in the forms ``alpha op(op(X + P Q)) + P Q`` (trmm/trsm,
   gemm) and accepted when its numbers agree on instantiations drawn
   independently of it (with ``FLAMEFUSE_DERIVE_PROVE=1`` SymPy must also
   prove it: expand, ``X^{-1} X = I``).
4. every update, mechanical or algebraic, is run on random blocks
   (``algebra.check``) and must leave every block at its after-state value.

   A term the algebra cannot place (the message names the block and its
   value), a read of an overwritten value or a dependence cycle (both would
   need a temporary), a task the rules do not cover, or operations that
   traverse in different directions give ``NotDerivable(reason)`` (the
   first option's reason); nothing is guessed.

The traversal's loop indices: :mod:`.dims` (which partitioned dimensions of the operands
move together, one loop index per class).

Values:

* ``DerivedLoop(problem, direction, bodies)``: ``bodies`` one ``Body`` per
  operation in order; ``update()`` the fused body (concatenation);
  ``lines()`` the loop in FLAME notation (``A21 := A21 A11^{-T}``,
  ``A22 -= A21 A21^T``); ``update_lines()`` just the update lines.
* ``Body(operation, direction, invariant, update)``: ``invariant`` the past
  tasks in the readable syntax, ``update`` a tuple of
  :class:`flamefuse.derive.blocks.FineTask`; ``lines()`` its FLAME notation.
* ``NotDerivable(reason)``.
* ``render(fine_task) -> str``: one fine task in FLAME notation.

Block names are the operand's name and the grid indices (``A21``, ``b1``);
``unit_lower(A11)`` / ``upper(A11)`` name the triangles of a general block.
"""
from flamefuse.derive.blocks import Blk, Fac, FineTask, Ref, render
from flamefuse.derive.loop import Body, DerivedLoop, NotDerivable, derive_solution

__all__ = ["Blk", "Body", "DerivedLoop", "Fac", "FineTask", "NotDerivable", "Ref", "derive_solution", "render"]
