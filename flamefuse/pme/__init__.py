"""Task model: regions, states, tasks, operations; the reference term syntax.

Types (all frozen dataclasses, in :mod:`flamefuse.pme.model`):

* ``State(kind, region, n=None, tag=None)`` -- a base state of a region:
  ``hat(R)`` (initial, kind ``"hat"``), ``during(R, n)`` / ``during(R, n, tag)``
  (intermediate, kind ``"during"``) and ``tilde(R)`` (final, kind ``"tilde"``).
  ``pr(a, b)`` is the precedence of states of one region:
  hat < during(m) < during(n) (m < n) < tilde; equal steps never precede.
* ``AnyOf(options)`` -- ``any([s1, ..., sk])``, an input that may be any one
  of its base states (never an output).
* Expressions are terms: ``Fn(name, args)``, ``Atom``, ``Num``, ``TermList``
  with states and ``AnyOf`` anywhere inside.  ``inputs(task)`` returns every
  state and ``any`` inside a task's expression, in order (an ``any`` is one
  input).
* ``Task(kind, out, expr, pos)`` -- kind ``eq`` | ``op_eq`` | ``comes_from`` |
  ``const``; ``out`` a base state.  ``const(hat(R))`` tasks are added by
  ``with_const_tasks`` for pure-input regions (never written by users).
* ``Operation(name, tasks, exact, note, pivot)`` -- one loop; ``exact`` is true
  when the tasks carry exact kernel semantics (library operations); ``pivot``
  for LU with partial pivoting.
* ``Problem(name, operations, operands, description, source, finish)`` -- the
  operations in order over shared storage; ``Operand`` describes a matrix or
  vector of a YAML spec; ``Finish(kind, operands)`` a step run once after the
  fused loop (``unpivot_columns``, ``upper_solve``).
* ``Invariant(past)`` (:mod:`flamefuse.pme.invariant`) -- a fused invariant: per
  operation the indices of its past tasks; what the search finds and the
  derivation reads (the value between the two stages).

Reference term syntax (:mod:`flamefuse.pme.terms`): ``parse_problem(text,
file)`` reads a file holding one list of task lists ending with a period,
``%`` comments, arbitrary function terms in expressions, and returns a
Problem; ``show(x)`` writes any value back in that syntax without spaces
(``tilde(l_tl)``, ``during(lbl,0,a)``).  ``validate(problem)`` checks the
rules every input must satisfy (one writer per state, an ``op_eq`` task per
operation) and raises :class:`flamefuse.errors.FlameError` otherwise.
"""
from flamefuse.pme.model import (AnyOf, Atom, Expr, Finish, Fn, Input, Num, Operand, Operation, Pos,
                                 Problem, State, Task, TermList, input_states, inputs, mentions,
                                 pr, pure_inputs, regions_of, with_const_tasks)
from flamefuse.pme.terms import parse_problem, show
from flamefuse.pme.validate import validate

__all__ = ["AnyOf", "Atom", "Expr", "Finish", "Fn", "Input", "Num", "Operand", "Operation", "Pos", "Problem",
           "State", "Task", "TermList", "input_states", "inputs", "mentions", "pr", "pure_inputs",
           "regions_of", "with_const_tasks", "parse_problem", "show", "validate"]
