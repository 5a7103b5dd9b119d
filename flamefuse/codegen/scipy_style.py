"""The SciPy-style function of a generated module, named after its spec.

``render(problem) -> str`` writes ``<spec>(*operands, overwrite_<x>=False,
check_finite=True, block_size=None, variant=None)`` and the tables it reads
(``_OPERANDS``, ``_RESULTS``, ``_RETURNS_PIV``, ``_ON_INFO``): any memory
layout and any of the four LAPACK precisions in (integers become float64;
the operands share the precision NumPy promotes them to), the input
untouched unless ``overwrite_<x>``, and out what NumPy/SciPy return.

What it returns: every operand some operation writes and no later step
only reads (those are intermediates, as the factor in a solve), in spec
order, in the form of its last writer (a lower factor with zeros above, a
full symmetric matrix, or the matrix as computed); a pivoted LU whose pivots
no finish step uses also returns ``piv`` (as ``scipy.linalg.lu_factor``).
A failure (info > 0) raises ``numpy.linalg.LinAlgError`` (not positive
definite; singular), except for a bare LU, which warns like ``lu_factor``.
A C-ordered operand is used without a copy (with ``overwrite_<x>=True``)
where a transpose identity makes that free for real data: a symmetric
operand, and the inverse of a general one (inv(A^T) = inv(A)^T).
"""
from __future__ import annotations

from flamefuse.pme.model import Problem, inputs, input_states


def _region_operand(problem: Problem) -> dict[str, str]:
    return {f"{o.name.lower()}_{p}": o.name for o in problem.operands for p in ("tl", "tr", "bl", "br", "t", "b", "l", "r")}


def returned(problem: Problem) -> list[tuple[str, str]]:
    """(operand, form) of the values the function returns (see the module doc)."""
    owner = _region_operand(problem)
    last: dict[str, str] = {}
    consumed: set[str] = set()
    for op in problem.operations:
        written = {owner[t.out.region] for t in op.tasks if t.kind != "const"}
        read = {owner[s.region] for t in op.tasks for i in inputs(t) for s in input_states(i)}
        consumed |= {o for o in read - written if o in last}
        consumed -= written
        last.update(dict(op.result))
    consumed |= {name for f in problem.finish for name in f.operands[:-1]} if problem.finish else set()
    return [(o.name, last[o.name]) for o in problem.operands if o.name in last and o.name not in consumed]


def _flip_ok(problem: Problem) -> bool:
    """A C-ordered operand can be used through its transpose (see the module doc)."""
    if len(problem.operands) != 1 or problem.operands[0].partition != "2x2":
        return False
    names = [op.name for op in problem.operations]
    inverse = names[0] in ("lu", "lu_nopiv") and names[-1] == "ul"
    return problem.operands[0].structure == "symmetric" or inverse


def _on_info(problem: Problem) -> str:
    names = [op.name for op in problem.operations]
    if any(n == "chol" for n in names):
        return "spd"
    return "warn" if names in (["lu"], ["lu_nopiv"]) else "singular"


def render(problem: Problem) -> str:
    results = returned(problem)
    written = {name for op in problem.operations for name, _ in op.result}
    flip = _flip_ok(problem)
    table = tuple((o.name, o.kind, o.name in written, flip) for o in problem.operands)
    piv = any(op.pivot for op in problem.operations) and not problem.finish
    args = ", ".join(o.name for o in problem.operands)
    overwrites = [o.name for o in problem.operands if o.name in written]
    kw = "".join(f"overwrite_{n.lower()}=False, " for n in overwrites)
    outs = ", ".join(f"{n} ({form})" for n, form in results) + (", piv" if piv else "")
    lines = [f"_OPERANDS = {table!r}", f"_RESULTS = {tuple(results)!r}", f"_RETURNS_PIV = {piv!r}",
             f"_ON_INFO = {_on_info(problem)!r}", "", "",
             f"def {problem.name}({args}, *, {kw}check_finite=True, block_size=None, variant=None):",
             f'    """{problem.name} the SciPy way: returns {outs}.',
             "",
             "    Any memory layout; float32, float64, complex64 or complex128 (integers become float64);",
             "    the inputs are left alone unless overwrite_<name> is",
             "    true (then they may hold the result). check_finite rejects NaN and Inf (ValueError).",
             "    Raises numpy.linalg.LinAlgError where the computation fails (info > 0).",
             "    block_size: None picks block_size_for(n); variant: a name of VARIANTS (DEFAULT if None).",
             "    The in-place variants (VARIANTS) skip every copy and check of finiteness.",
             '    """',
             f"    overwrite = {{{', '.join(f'{n!r}: overwrite_{n.lower()}' for n in overwrites)}}}",
             f"    return _scipy_call({problem.name!r}, (_OPERANDS, _RESULTS, _RETURNS_PIV, _ON_INFO), VARIANTS, "
             f"DEFAULT, variant, ({args},), overwrite, check_finite, block_size)", ""]
    return "\n".join(lines)
