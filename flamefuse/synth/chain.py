"""A chain of library operations on buffers: the spec that a recorded call sequence becomes.

``Buffer(name, kind, structure)`` is one operand (a matrix partitioned 2x2,
or with ``kind`` "rhs" a right-hand side partitioned by rows: a vector or a
matrix); ``Step(op, binds)`` one library operation with its formal ->
buffer bindings; ``Chain(buffers, steps, finish)`` the whole sequence.
:func:`problem` builds its Problem through the binding functions the YAML loader
uses (:mod:`flamefuse.spec.bind`): the very dataclasses the spec a person would
write in ``specs/`` gives, with no YAML text between; :func:`key` names it by
structure (never by n).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

# chains that a shipped spec in specs/ also describes take its name
KNOWN = {("chol", "trinv", "ltl"): "spd_inverse", ("chol", "trsm"): "chol_trsm",
         ("chol", "trinv"): "chol_trinv", ("chol",): "cholesky", ("trinv",): "trinv", ("ltl",): "ltl",
         ("trsm",): "trsm", ("lu",): "lu", ("lu", "trinv_unit", "triuinv", "ul"): "general_inverse",
         ("lu", "trsm_unit"): "lu_solve", ("trinv", "ltl"): "trinv_ltl", ("trsm_lt",): "trsm_lt",
         ("trsm", "trsm_lt"): "trsm_trsm_lt"}


@dataclass(frozen=True)
class Buffer:
    name: str                 # letters only (a spec operand name)
    kind: str                 # "matrix" (2x2) | "vector" | "rows" (a matrix partitioned by rows)
    structure: str = "general"

    def operand(self):
        """The spec operand (:func:`flamefuse.spec.bind.operand`)."""
        from flamefuse.spec import bind
        if self.kind == "vector":
            return bind.operand(self.name, "vector")
        if self.kind == "rows":
            return bind.operand(self.name, "matrix", partition="rows")
        return bind.operand(self.name, "matrix", self.structure)


@dataclass(frozen=True)
class Step:
    op: str                                   # a name of flamefuse.spec.LIBRARY
    binds: tuple[tuple[str, str], ...]        # (formal, buffer name)


@dataclass(frozen=True)
class Chain:
    buffers: tuple[Buffer, ...]
    steps: tuple[Step, ...]
    finish: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (kind, buffer names), after the loop

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(s.op for s in self.steps)

    @property
    def name(self) -> str:
        return KNOWN.get(self.ops, "_".join(self.ops))

    def used(self) -> "Chain":
        """The chain over only the buffers its steps bind (in first-use order)."""
        names = []
        for s in self.steps:
            names += [b for _, b in s.binds if b not in names]
        by = {b.name: b for b in self.buffers}
        return Chain(tuple(by[n] for n in names), self.steps, self.finish)


def problem(chain: Chain):
    """The Problem of ``chain`` (operands in first-use order), as the YAML spec naming its
    buffers, steps and finish steps would load."""
    from flamefuse.spec import bind
    from flamefuse.spec.load import check_name
    source = f"<{chain.name}>"
    name = check_name(chain.name, file=source)
    operands = {}
    for b in chain.buffers:
        operands[bind.operand_name(b.name, operands)] = b.operand()
    ops = [bind.operation(s.op, dict(s.binds), operands, k, source) for k, s in enumerate(chain.steps)]
    finish = [bind.finish(kind, names, operands, ops) for kind, names in chain.finish]
    return bind.problem(name, ops, operands, "built at run time by flamefuse.synth", source, finish)


def key(chain: Chain, stamp: str = "") -> str:
    """The module name of ``chain``: its name and a digest of its structure (buffers, steps
    and finish steps, not sizes) and of ``stamp`` (the code generator's version)."""
    digest = hashlib.sha1((repr(chain) + stamp).encode()).hexdigest()[:12]
    return f"flamefuse_synth_{chain.name}_{digest}"
