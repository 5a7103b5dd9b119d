"""Per-operation cost of ``flamefuse.lazy``'s eager path on small arrays, beside NumPy's own call.

``flamefuse bench eager_ops [--sizes 10,500,5000] [--number N] [--repeat R] [--learning]``

Each operation (``a + b``, ``a * 2.0``, ``a[i] = x``, ``a[i:j] @ b[i:j]``, ``np.dot(a, b)``,
``a.sum()``, ``np.sqrt(a)``, ``x = a[i]``, ``a - b``, ``m[5, :j] @ a[:j]``, ``s * a`` with a
NumPy scalar ``s``, ``a[i:j] += x``) runs ``N`` times in a loop on float64
operands of each size: once on NumPy arrays with ``numpy``, once on lazy arrays (``asarray``)
with ``flamefuse.lazy`` and ``eager_below`` = 32768 (the CLI's default), so every one runs
eagerly. The best of ``R`` rounds, in microseconds per operation, and the ratio lazy / NumPy.
``--learning`` keeps adaptive fusion's tallies on (as the first run of ``flamefuse fuse`` does).
Writes nothing.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy


OPS = {
    "a + b": "a + b",
    "a * 2.0": "a * 2.0",
    "a[i] = x": "a[i] = x",
    "a[i:j] @ b[i:j]": "a[i:j] @ b[i:j]",
    "np.dot(a, b)": "np.dot(a, b)",
    "a.sum()": "a.sum()",
    "np.sqrt(a)": "np.sqrt(a)",
    "x = a[i]": "y = a[i]",
    "a - b": "a - b",
    "m[5, :j] @ a[:j]": "m[5, :j] @ a[:j]",
    "s * a (s np.float64)": "s * a",
    "a[i:j] += x": "a[i:j] += x",
}


def _time(stmt: str, env: dict, number: int, repeat: int) -> float:
    code = compile(f"for _ in range({number}):\n    {stmt}\n", stmt, "exec")
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        exec(code, env)
        best = min(best, time.perf_counter() - t)
    return best / number * 1e6


def measure(sizes, number: int, repeat: int, learning: bool = False) -> list[tuple]:
    """Rows (size, op, numpy_us, lazy_us)."""
    import flamefuse.lazy as lnp
    from flamefuse.lazy.recorder import RECORDER
    from flamefuse.runtime import adapt
    saved = RECORDER.eager_below, adapt.STATE.learning
    lnp.configure(eager_below=32768)
    adapt.STATE.learning = learning
    try:
        return _rows(lnp, sizes, number, repeat)
    finally:
        RECORDER.eager_below, adapt.STATE.learning = saved


def _rows(lnp, sizes, number: int, repeat: int) -> list[tuple]:
    rows = []
    for n in sizes:
        rng = numpy.random.default_rng(0)
        a0, b0 = rng.random(n), rng.random(n)
        m0 = rng.random((8, n))
        i = n // 3
        j = n // 3 + max(2, n // 4)
        plain = {"np": numpy, "a": a0.copy(), "b": b0.copy(), "i": i, "j": j, "x": 0.5,
                 "s": numpy.float64(0.5), "m": m0.copy()}
        lazy = {"np": lnp, "a": lnp.asarray(a0.copy()), "b": lnp.asarray(b0.copy()), "i": i, "j": j,
                "x": 0.5, "s": numpy.float64(0.5), "m": lnp.asarray(m0.copy())}
        for name, stmt in OPS.items():
            rows.append((n, name, _time(stmt, plain, number, repeat), _time(stmt, lazy, number, repeat)))
    return rows


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="flamefuse bench eager_ops")
    p.add_argument("--sizes", default="10,500,5000")
    p.add_argument("--number", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--learning", action="store_true")
    opts = p.parse_args(argv)
    rows = measure([int(s) for s in opts.sizes.split(",")], opts.number, opts.repeat, opts.learning)
    print(f"{'n':>6} {'operation':<21} {'numpy us':>9} {'lazy us':>9} {'ratio':>7}")
    for n, name, t_np, t_lz in rows:
        print(f"{n:>6} {name:<21} {t_np:9.2f} {t_lz:9.2f} {t_lz / t_np:7.2f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
