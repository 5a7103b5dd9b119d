"""The recorded linear-algebra calls (what :mod:`flamefuse.lazy.linalg` puts in the recorder).

A :class:`Call` is the ``name`` slot of a recorded ``("linalg", call, out,
ins, shape, loop, axis)`` operation: which NumPy/SciPy function the script
called (``name``, for messages and ``--explain``), what it computes (``op``),
its options, the pivot output of ``lu_factor`` (``extra``) and ``eager``,
the script's own call on NumPy arrays (run when no library operation
matches: the result is then exactly NumPy's/SciPy's).

``op`` is one of ``cholesky`` (the lower factor; ``upper``: the script sees
its transpose), ``inv``, ``solve``, ``solve_triangular`` (``lower``,
``trans`` 0/1), ``matmul``, ``cho_solve`` (``lower``), ``lu_factor`` and
``lu_solve`` (``trans`` 0).

``WARNINGS``: the messages of ``LinAlgWarning``s a run gave (an exactly singular
``lu_factor``), for the caller to issue at the script's line
(:func:`flamefuse.lazy.linalg.record`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True, eq=False)
class Call:
    name: str
    op: str
    eager: Callable = field(repr=False)
    lower: bool = True
    trans: int = 0
    upper: bool = False
    extra: tuple = ()


WARNINGS: list[str] = []

OPS = ("cholesky", "inv", "solve", "solve_triangular", "matmul", "cho_solve", "lu_factor", "lu_solve")
