"""Search: every fused loop invariant of a problem, and why there is none.

The semantics are rules 1-7 of the invariant search (past and future
dependencies, comes_from, progress, const tasks for pure inputs, fusion use
over *every* input of a task, own region included, and fusion entailment
through the per-region bounds C_R and U_R). Three engines compute the same
set; the tests compare them on the references and on random task lists:

``enumerate_cpsat(problem) -> list[Invariant]`` (:mod:`.enumerate`)
    The production engine: the CP-SAT model of :mod:`.model` (one Boolean
    per task, integer C_R/U_R canonicalised so solutions are 1:1 with the
    task indicators), all solutions enumerated.
``enumerate_csp(problem)`` (:mod:`.csp`)
    python-constraint, built independently from the rules (exponential in the
    regions; for cross-checks).
``enumerate_brute(problem, max_tasks=14)`` (:mod:`.brute`)
    Brute force over 0/1 assignments per operation, C/U by interval
    reasoning; written from the rules' text, shares no code with the others.

An ``Invariant`` (:mod:`flamefuse.pme.invariant`) holds, per operation, the indices of its
past tasks (const tasks included; ``states(problem)`` gives their output
states); ``strips(problem, inv)`` the computed / partial / uncomputed cells
of every region with C_R and U_R. ``explain(problem)`` (:mod:`.explain`)
turns a minimal unsatisfiable core of the CP-SAT model into the operations,
regions and reasons that make fusion impossible. :mod:`.bounded` makes a search end (at
most ``limit`` invariants, a time budget, progress while it runs). :mod:`flamefuse.cli.derive` is the
``flamefuse derive`` command (tables, ``--json``, ``--engine``, ``--emit``,
``--latex``, ``--svg``); what it reports is computed once per spec file and
derivation code and kept in the user cache (:mod:`flamefuse.cli.derive_record`). The search
knows nothing of the derivation: :mod:`flamefuse.pipeline` runs one after the other.
"""
