"""Block-size autotuning for generated kernels, cached per machine.

``block_size(fn, key, n, make_args, *, reps=None, cache_dir=None) -> int``
    The fastest block size for the generated wrapper ``fn`` (called as
    ``fn(*make_args(), block_size=nb)``) at dimension ``n``.  A cached answer
    for (machine, ``key``, n) is returned without timing; otherwise each of
    :func:`candidates` ``(n)`` is timed (minimum of ``reps`` calls on fresh
    inputs, candidates interleaved; 3 reps below n = 2048, 1 from there on)
    and the winner is written to the cache.  ``key`` names the kernel, e.g.
    ``"spd_inverse.spd_inverse_v1"``; include a hash of the kernel's source
    in it (as ``flamefuse bench kernels`` does) so that a regenerated kernel is
    tuned afresh.
``candidates(n) -> tuple[int, ...]``
    The block sizes tried at ``n``: 8 ... 256 (at most n), coarser for large n.
``cache_file(cache_dir=None) -> Path | None``
    ``blocksize.json`` in ``cache_dir``, else the entry ``blocksize`` of the store's kind
    ``codegen`` (:mod:`flamefuse.store`: ``$FLAMEFUSE_CACHE_DIR/codegen``, else the user
    cache folder).  Either way a store entry (header line, then JSON; stale, damaged or
    foreign: empty, and rewritten); the JSON maps a machine key, then ``"<key>|<n>"``, to a
    block size.
``machine_key() -> str``
    :func:`flamefuse.machine.tuning_key`: CPU model, core count and the BLAS thread setting
    (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``): a tuned block size is only reused where
    it was measured.

``tune_table(problem, module, sizes=TABLE_SIZES, ...) -> tuple[(n, nb, serial), ...]``
    The fastest block size and BLAS threading of the module's ``DEFAULT`` at each of ``sizes``
    (inputs from :func:`inputs`, no cache; candidates in a fresh random order
    each repetition), for the committed table.
``write_table(table, path=TABLE_FILE)``
    Writes ``flamefuse/codegen/block_sizes.py``: ``TABLE`` (spec name ->
    ``((n, nb, serial), ...)``, serial 1: the BLAS calls on one thread) and
    ``MODEL`` (per n, the median block size over the specs: the
    table of a spec that was never tuned).  ``emit_module`` embeds a spec's
    table in its generated module, whose ``block_size=None`` (the default)
    picks the entry of the measured n nearest in log scale: deterministic for
    a given n, and re-measured on a machine by ``flamefuse bench blocksize
    --write`` followed by regeneration.

The generated modules never read the user cache (their table is compiled in,
so a kernel's bytes depend only on n, the block size and the BLAS thread
count).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

from flamefuse import store
from flamefuse.files import write_text_atomic
from flamefuse.machine import tuning_key as machine_key
from flamefuse.timing import side_by_side

SIZES = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
LARGE = 2048


def candidates(n: int) -> tuple[int, ...]:
    sizes = SIZES if n < LARGE else (64, 128, 192, 256)
    fitting = tuple(s for s in sizes if s <= n)
    return fitting or (max(1, n),)


ENTRY = "blocksize"


def cache_file(cache_dir=None) -> Path | None:
    """The tuning file; None when no cache folder can be used (then nothing is cached)."""
    if cache_dir:
        return Path(cache_dir) / f"{ENTRY}.json"
    return store.path("codegen", ENTRY, ".json")


def _read(path: Path | None) -> dict:
    """The tuning file's table (empty when missing, stale, damaged or refused: rewritten)."""
    raw = None if path is None else store.read(path, "codegen", ENTRY)
    try:
        data = json.loads(raw) if raw is not None else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path | None, data: dict) -> None:
    if path is not None:
        store.write(path, "codegen", ENTRY, json.dumps(data, indent=1, sort_keys=True))


def block_size(fn: Callable, key: str, n: int, make_args: Callable, *, reps: int | None = None,
               cache_dir=None) -> int:
    path, machine, entry = cache_file(cache_dir), machine_key(), f"{key}|{n}"
    data = _read(path)
    cached = data.get(machine, {}).get(entry)
    if isinstance(cached, int) and cached > 0:
        return cached
    sizes = candidates(n)
    fn(*make_args(), block_size=sizes[0])    # compile (or load from Numba's cache) and warm up
    best = side_by_side({nb: (lambda args, nb=nb: fn(*args, block_size=nb), make_args) for nb in sizes},
                        reps or (3 if n < LARGE else 1), seed=n)     # interleaved, fresh inputs
    choice = min(sizes, key=lambda nb: (best[nb], nb))
    data.setdefault(machine, {})[entry] = choice
    _write(path, data)
    return choice


TABLE_SIZES = (32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
TABLE_FILE = Path(__file__).with_name("block_sizes.py")


def inputs(problem, n: int, rng) -> list:
    """Operands in spec order that every shipped kernel accepts: SPD for symmetric
    operands, diagonally dominant otherwise (triangular kernels read their triangle),
    ``min(n, 256)`` right-hand sides for row- or column-partitioned matrices."""
    import numpy as np
    out = []
    for o in problem.operands:
        if o.kind == "vector":
            out.append(rng.standard_normal(n))
            continue
        k = min(n, 256)
        shape = {"rows": (n, k), "columns": (k, n)}.get(o.partition, (n, n))
        x = rng.standard_normal(shape)
        if o.partition == "2x2":
            x = x @ x.T / n + np.eye(n) if o.structure == "symmetric" else x + n * np.eye(n)
        out.append(np.asfortranarray(x))
    return out


def call_with(module, args, nb: int, serial: int):
    """``module.DEFAULT(*args)`` with block size nb and the BLAS on one thread (serial 1) or on
    its default threads (0), whatever the module's table says."""
    saved = module._BLOCK_STEPS
    module._BLOCK_STEPS = ((2 ** 62, nb, serial),)      # the wrapper takes its thread choice from here
    try:
        return module.DEFAULT(*args, block_size=nb)
    finally:
        module._BLOCK_STEPS = saved


def tune_table(problem, module, sizes=TABLE_SIZES, *, on_size=None) -> tuple[tuple[int, int, int], ...]:
    """(n, block size, serial) fastest for ``module.DEFAULT`` at each n, measured now: every block
    size with the BLAS on one thread (serial 1) and on its default threads (0), side by side."""
    import numpy as np
    rng = np.random.default_rng(0)
    out = []
    for n in sizes:
        base = inputs(problem, n, rng)
        make = lambda base=base: [a.copy(order="F") if a.ndim == 2 else a.copy() for a in base]
        reps = 41 if n <= 128 else 21 if n <= 512 else 7 if n <= 1024 else 3
        configs = [(nb, serial) for nb in candidates(n) for serial in (1, 0)]
        module.DEFAULT(*make(), block_size=configs[0][0])      # compile first
        best = side_by_side({c: (lambda args, c=c: call_with(module, args, *c), make) for c in configs}, reps, seed=n)
        nb, serial = min(configs, key=lambda c: (best[c], c))
        out.append((n, nb, serial))
        if on_size:
            on_size(n, nb, serial)
    return tuple(out)


def write_table(table: dict, path=TABLE_FILE) -> Path:
    """Write the committed block-size table (and the median MODEL) as a Python module."""
    import statistics
    sizes = sorted({row[0] for rows in table.values() for row in rows})
    model = []
    for n in sizes:
        at = [row for rows in table.values() for row in rows if row[0] == n]
        serial = int(2 * sum(row[2] for row in at) > len(at))
        model.append((n, int(statistics.median_low([row[1] for row in at])), serial))
    lines = ['"""Block sizes and BLAS threading measured per spec and n on the development machine',
             "(written by ``flamefuse bench blocksize --write``; regenerate the modules after changing it).",
             "", "Rows: (n, block size, serial): serial 1 runs the kernel's BLAS calls on one thread.",
             "", f"Machine: {machine_key()}", '"""', "", "TABLE = {"]
    lines += [f"    {name!r}: {rows!r}," for name, rows in sorted(table.items())]
    lines += ["}", "", "# per n, the median block size over the specs (and the majority's threading):",
              "# the table of a spec never tuned", f"MODEL = {tuple(model)!r}", ""]
    return write_text_atomic(Path(path), "\n".join(lines))


def table_for(name: str) -> tuple[tuple[int, int, int], ...]:
    """The committed table of a spec, else the MODEL."""
    from flamefuse.codegen import block_sizes
    return tuple(block_sizes.TABLE.get(name) or block_sizes.MODEL)


def steps(table) -> tuple[tuple[int, int, int], ...]:
    """(largest n, block size, serial) per measured n: the boundaries are the geometric means of
    neighbouring measured sizes, so each n takes the measured n nearest in log scale."""
    rows = sorted(table)
    edges = [math.isqrt(a[0] * b[0]) for a, b in zip(rows, rows[1:])] + [2 ** 62]
    return tuple((e, nb, serial) for e, (_, nb, serial) in zip(edges, rows))


def pick(table, n: int) -> int:
    """The block size a generated module uses at ``n`` (its ``block_size_for``)."""
    return next(nb for edge, nb, _ in steps(table) if n <= edge)


def serial(table, n: int) -> int:
    """1 where a generated module runs its BLAS calls at ``n`` on one thread."""
    return next(s for edge, _, s in steps(table) if n <= edge)


__all__ = ["block_size", "cache_file", "call_with", "candidates", "inputs", "machine_key", "pick", "table_for",
           "serial", "steps", "tune_table", "write_table", "TABLE_FILE", "TABLE_SIZES"]
