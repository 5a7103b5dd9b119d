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
    The block sizes tried at ``n``: 16 ... 256 (at most n), coarser for large n.
``cache_file(cache_dir=None) -> Path``
    ``blocksize.json`` in ``cache_dir``, else in :func:`flamefuse.cache.cache_dir`
    ``("codegen")`` (``$FLAMEFUSE_CACHE_DIR/codegen``, else
    ``~/.cache/flamefuse/codegen``).  The JSON maps a machine key, then
    ``"<key>|<n>"``, to a block size.
``machine_key() -> str``
    CPU model, core count and the BLAS thread setting (``OPENBLAS_NUM_THREADS``,
    ``OMP_NUM_THREADS``): a tuned block size is only reused where it was measured.

The generated modules never read the cache (their default is fixed, so a
kernel's bytes depend only on the block size you pass and the BLAS thread
count); pass ``block_size=block_size(...)`` to use a tuned one.
"""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Callable

from flamefuse.files import write_text_atomic
from flamefuse.cache import cache_dir as user_cache_dir

SIZES = (16, 32, 48, 64, 96, 128, 192, 256)
LARGE = 2048


def candidates(n: int) -> tuple[int, ...]:
    sizes = SIZES if n < LARGE else (64, 128, 192, 256)
    fitting = tuple(s for s in sizes if s <= n)
    return fitting or (max(1, n),)


def machine_key() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "default"
    return f"{model} x{os.cpu_count()} threads={threads}"


def cache_file(cache_dir=None) -> Path:
    return Path(cache_dir or user_cache_dir("codegen")) / "blocksize.json"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True))


def _time(fn: Callable, make_args: Callable, nb: int) -> float:
    args = make_args()
    t = time.perf_counter()
    fn(*args, block_size=nb)
    return time.perf_counter() - t


def block_size(fn: Callable, key: str, n: int, make_args: Callable, *, reps: int | None = None,
               cache_dir=None) -> int:
    path, machine, entry = cache_file(cache_dir), machine_key(), f"{key}|{n}"
    cached = _read(path).get(machine, {}).get(entry)
    if isinstance(cached, int) and cached > 0:
        return cached
    sizes = candidates(n)
    fn(*make_args(), block_size=sizes[0])    # compile (or load from Numba's cache) and warm up
    best = {nb: float("inf") for nb in sizes}
    for _ in range(reps or (3 if n < LARGE else 1)):
        for nb in sizes:
            best[nb] = min(best[nb], _time(fn, make_args, nb))
    choice = min(sizes, key=lambda nb: (best[nb], nb))
    data = _read(path)
    data.setdefault(machine, {})[entry] = choice
    _write(path, data)
    return choice


__all__ = ["block_size", "cache_file", "candidates", "machine_key"]
