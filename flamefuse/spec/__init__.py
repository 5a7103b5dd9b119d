"""Specs: YAML problem descriptions for people, and the library of operations.

A spec (``specs/*.yaml``)::

    name: chol_trsm                      # required: the name of generated modules
    description: Cholesky, then L X = B  # optional, free text
    operands:                            # each: kind, structure, partition (defaults shown)
      A: {kind: matrix, structure: symmetric}         # kind: matrix | vector (matrix)
      B: {kind: matrix, partition: rows}              # structure: lower | upper | symmetric | general
                                                      # partition: 2x2 | rows | columns (2x2; vectors rows)
    operations:                          # in order; each a library operation ...
      - op: chol
        A: A                             # formal operand: spec operand
      - op: trsm
        L: A
        B: B
      - name: scale                      # ... or explicit tasks in the readable syntax
        tasks:
          - op B_T~ = 2 * B_T
          - op B_B~ = 2 * B_B

Regions are ``<operand>_<part>`` (``A_TL``, ``B_T``) by the operand's
partition; states are ``A_TL`` (initial), ``A_TL~`` (final), ``A_BR@0``
(intermediate 0), ``A_BL@0a`` (tagged).  The task syntax is documented in
:mod:`flamefuse.spec.expr`; the library (exact PMEs) in
:mod:`flamefuse.spec.library`.

Exports: ``load(path) -> Problem`` (YAML spec, or the reference term syntax
for any other suffix), ``load_spec_text(text, file) -> Problem``,
``LIBRARY`` (name -> LibOp), ``show_readable(task_or_expr, names)``.
Errors raise :class:`flamefuse.errors.FlameError` with file, line, column
and a hint.
"""
from flamefuse.spec.expr import parse_task, show_readable
from flamefuse.spec.library import LIBRARY, LibOp, lookup
from flamefuse.spec.load import load, load_spec_text

__all__ = ["LIBRARY", "LibOp", "load", "load_spec_text", "lookup", "parse_task", "show_readable"]
