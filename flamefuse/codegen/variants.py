"""The variant each generated module calls DEFAULT, where it was measured
(written by ``flamefuse bench variants SPEC --write``; regenerate the modules after changing it).

Rows: spec -> (variant name, how it was chosen).  A spec without a row (or whose
row names a variant that no longer derives) takes the derivable variant with
the most past tasks.
"""
from __future__ import annotations

from pathlib import Path

FASTEST = {
    'chol_solve': ('chol_solve_v5', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'chol_trinv': ('chol_trinv_v3', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'chol_trsm': ('chol_trsm_v5', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'cholesky': ('cholesky_v3', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'ltl': ('ltl_v1', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'lu': ('lu_v5', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'lu_nopiv': ('lu_nopiv_v5', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'lu_solve': ('lu_solve_v8', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'sylvester': ('sylvester_v9', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trinv': ('trinv_v2', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trinv_trmv': ('trinv_trmv_v3', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trinv_unit': ('trinv_unit_v4', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'triuinv': ('triuinv_v1', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trmv': ('trmv_v3', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trmv_trinv': ('trmv_trinv_v6', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trsm': ('trsm_v2', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'trsv': ('trsv_v2', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
    'ul': ('ul_v4', 'fastest for n >= 1024 of n = 256, 512, 1024, 2048, 2026-11-24'),
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
