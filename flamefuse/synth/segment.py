"""The open chain of a group: buffers, library steps, the calls they came from, and its cuts."""
from __future__ import annotations

from dataclasses import dataclass, field

from flamefuse.synth.chain import Chain


@dataclass(eq=False)
class Segment:
    buffers: dict = field(default_factory=dict)      # name -> ndarray
    specs: dict = field(default_factory=dict)        # name -> Buffer
    steps: list = field(default_factory=list)
    calls: list = field(default_factory=list)        # (Call, first step, step count, finish)
    written: set = field(default_factory=set)
    piv: object = None
    note: str = ""


def _units(calls) -> list:
    """The pieces a chain may be cut into: single steps, except a call with a finishing step or a
    pivoted LU (its steps share the row interchanges) stays whole."""
    out = []
    for call, first, count, finish in calls:
        if finish or count == 1:
            out.append((call, first, count, finish))
        else:
            out += [(call, first + k, 1, ()) for k in range(count)]
    return out


def _chain(seg: Segment, calls) -> Chain:
    steps = tuple(s for c, first, count, _ in calls for s in seg.steps[first:first + count])
    finish = tuple(f for c in calls for f in c[3])
    return Chain(tuple(seg.specs.values()), steps, finish).used()
