"""A chain of library operations on buffers: the spec that a recorded call sequence becomes.

``Buffer(name, kind, structure)`` is one operand (a matrix partitioned 2x2,
or with ``kind`` "rhs" a right-hand side partitioned by rows: a vector or a
matrix); ``Step(op, binds)`` one library operation with its formal ->
buffer bindings; ``Chain(buffers, steps, finish)`` the whole sequence.
:func:`spec_text` writes it as the YAML spec a person would write, so the
loader (:func:`flamefuse.spec.load_spec_text`) builds the very dataclasses a
file in ``specs/`` gives; :func:`key` names it by structure (never by n).
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

    def yaml(self) -> str:
        if self.kind == "vector":
            return "{kind: vector}"
        if self.kind == "rows":
            return "{kind: matrix, partition: rows}"
        return f"{{kind: matrix, structure: {self.structure}}}"


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


def spec_text(chain: Chain) -> str:
    """The YAML spec of ``chain`` (operands in first-use order)."""
    lines = [f"name: {chain.name}", "description: built at run time by flamefuse.synth", "operands:"]
    lines += [f"  {b.name}: {b.yaml()}" for b in chain.buffers]
    lines.append("operations:")
    for s in chain.steps:
        lines.append(f"  - op: {s.op}")
        lines += [f"    {formal}: {buf}" for formal, buf in s.binds]
    if chain.finish:
        lines.append("finish:")
        for kind, names in chain.finish:
            if kind == "upper_solve":
                lines.append(f"  - upper_solve: {{U: {names[0]}, B: {names[1]}}}")
            else:
                lines.append(f"  - {kind}: {names[0]}")
    return "\n".join(lines) + "\n"


def key(chain: Chain, stamp: str = "") -> str:
    """The module name of ``chain``: its name and a digest of its spec (structure, not sizes)
    and of ``stamp`` (the code generator's version)."""
    digest = hashlib.sha1((spec_text(chain) + stamp).encode()).hexdigest()[:12]
    return f"flamefuse_synth_{chain.name}_{digest}"
