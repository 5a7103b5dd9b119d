"""The variant each generated module calls DEFAULT, where it was measured
(written by ``flamefuse bench variants SPEC --write``; regenerate the modules after changing it).

Rows: spec -> (variant name, how it was chosen).  A spec without a row (or whose
row names a variant that no longer derives) takes the derivable variant with
the most past tasks.
"""
from __future__ import annotations

from pathlib import Path

FASTEST = {
}


def write_choice(spec: str, variant: str, how: str) -> None:
    """Record ``variant`` as the measured fastest of ``spec`` in this file."""
    rows = dict(FASTEST)
    rows[spec] = (variant, how)
    path = Path(__file__)
    text = path.read_text()
    head, tail = text.split("FASTEST = {\n", 1)
    body = "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(rows.items()))
    path.write_text(head + "FASTEST = {\n" + body + tail[tail.index("}"):])
    FASTEST.clear()
    FASTEST.update(rows)
