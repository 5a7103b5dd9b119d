"""The ``linalg:`` lines of ``flamefuse fuse --explain``: one per chain run, in order.

``LINES`` maps each distinct line to how often it occurred (insertion
ordered); :func:`report` renders them (``(x3)`` for repeats), :func:`reset`
clears them.
"""
from __future__ import annotations

LINES: dict[str, int] = {}


def add(line: str) -> None:
    LINES[line] = LINES.get(line, 0) + 1


def reset() -> None:
    LINES.clear()


def report() -> list[str]:
    return [line + (f" (x{n})" if n > 1 else "") for line, n in LINES.items()]


def shape_of(vals) -> str:
    return "n = " + str(vals[0].arr.shape[0]) if vals else ""


def _piece(calls, f) -> str:
    ops = " -> ".join(f.chain.ops)
    if not hasattr(f, "variant"):
        return f"{ops} as LAPACK calls ({f.reason})"
    return f"{ops} as {f.chain.name} variant {f.variant}"


def chain_line(seg, pieces, why: str) -> str:
    """One line for a closed chain: its operations in order and how they ran (returned too)."""
    steps = [s.op for s in seg.steps]
    n = next(iter(seg.buffers.values())).shape[0]
    names = " -> ".join(steps)
    if len(pieces) == 1:
        line = f"linalg: {_piece(*pieces[0])}, n = {n}"
    else:
        from flamefuse.synth.kernels import fused
        from flamefuse.synth.segment import _chain, _units, connected
        if connected(seg, _units(seg.calls)):
            reason = getattr(fused(_chain(seg, _units(seg.calls))), "reason", "")
        else:
            reason = "its calls are not connected by a shared operand"
        line = (f"linalg: {names}: not one fused loop ({reason}); runs as "
                + ", then ".join(_piece(*p) for p in pieces) + f", n = {n}")
    calls = ", ".join(dict.fromkeys(c[0].name for c in seg.calls))
    line += f" [{calls}]"
    if why:
        line += f"; the chain ends here: {why}"
    add(line)
    return line
