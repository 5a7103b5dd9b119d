"""Plans kept on disk between processes: a warm run skips partitioning and code generation.

A recorded program's plan (:class:`flamefuse.runtime.execute.Plan`: its kernels'
sources and argument lists, the contracted bases, the buffers' first and last
uses) depends only on the program and the partitioner, so, like Bohrium's fuse
cache, it is kept under ``<cache>/plans/<digest>.plan`` (the cache folder of
:mod:`flamefuse.cache`). ``load(program, partitioner)`` returns the stored record or
None; ``store(program, partitioner, record)`` writes it atomically. A record is
``(codes, steps, gone, cost, allocs, frees)``: plain values that pickle (each distinct kernel
once, as its :meth:`Code.plain <flamefuse.runtime.code.Code.plain>` tuple, a step its kernel's
number and arguments as tuples: ``execute._record``). A product group's loop-nest code is kept
the same way (:func:`flamefuse.runtime.linalg.kernel_of`: the record a ``NestCode.plain()``).

A file is the user's own private file or it is not read (:func:`flamefuse.trust.read_trusted`);
it holds a header (``MAGIC``, the identity's length and the identity text) and then the record,
pickled: the identity is compared before anything is unpickled, and the record is read by an
unpickler that refuses every global (:class:`_PlainUnpickler`), so it can only build tuples,
lists, dicts, strings, numbers, booleans and None, never call a function.

The key is the SHA-256 of the program's ``repr`` with the partitioner (:func:`text`,
also stored in the file and compared on load, so a hash collision reads nothing)
and of the source text of the modules that decide plans (``STAMP_MODULES``), so a
changed partitioner, graph rule or kernel generator never reads an old plan. An
unreadable or foreign file counts as absent (and is overwritten).
``FLAMEFUSE_PLAN_CACHE=0`` turns the disk cache off (plans stay cached in memory).
Only plans that took at least ``WORTH_S`` to build are stored (a small program is
planned faster than a file is read), which also keeps the folder small.
"""
from __future__ import annotations

import functools
import hashlib
import os
import io
import pickle
import struct
from pathlib import Path

from flamefuse.files import digest_files, write_bytes_atomic
from flamefuse.trust import read_trusted

STAMP_MODULES = ("execute", "graph", "kernel", "code", "partition", "program", "views", "plan_cache")
FORMAT = 3
MAGIC = b"flamefuse plan 3\n"
WORTH_S = 0.005


@functools.lru_cache(maxsize=1)
def _stamp() -> bytes:
    here = Path(__file__).resolve().parent
    return f"{FORMAT}:{digest_files(here / f'{name}.py' for name in STAMP_MODULES)}".encode()


def enabled() -> bool:
    return os.environ.get("FLAMEFUSE_PLAN_CACHE", "1") != "0"


def _folder() -> Path | None:
    from flamefuse.cache import usable_cache_dir
    return usable_cache_dir("plans")


def text(program, partitioner: str) -> str:
    """The program's identity: its ``repr`` (frozen dataclasses of ints, tuples and strings:
    deterministic, and ten times faster to make than a pickle)."""
    return f"{partitioner}|{program!r}"


def key(identity: str) -> str:
    return hashlib.sha256(_stamp() + identity.encode()).hexdigest()[:32]


def load(program, partitioner: str):
    """The stored record of ``program``'s plan, or None."""
    if not enabled():
        return None
    folder = _folder()
    if folder is None:
        return None
    identity = text(program, partitioner).encode()
    data = read_trusted(folder / f"{key(identity.decode())}.plan")
    head = len(MAGIC) + 8
    if data is None or not data.startswith(MAGIC) or len(data) < head:
        return None
    (size,) = struct.unpack("<Q", data[len(MAGIC):head])
    if data[head:head + size] != identity:      # compared before anything is unpickled
        return None
    try:
        return _PlainUnpickler(io.BytesIO(data[head + size:])).load()
    except (EOFError, pickle.UnpicklingError, ValueError, TypeError, IndexError, MemoryError):
        return None


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler that builds plain values only: every global (class or function) is refused,
    so nothing can be called while reading."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"a plan file names {module}.{name}: refused")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("a plan file holds a persistent id: refused")


def store(program, partitioner: str, record) -> None:
    """Write ``record`` (see the module doc) for ``program``; a failed write is ignored."""
    if not enabled():
        return
    folder = _folder()
    if folder is None:
        return
    identity = text(program, partitioner)
    raw = identity.encode()
    try:
        data = MAGIC + struct.pack("<Q", len(raw)) + raw + pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        _PlainUnpickler(io.BytesIO(data[len(MAGIC) + 8 + len(raw):])).load()    # plain values only
    except (pickle.PicklingError, pickle.UnpicklingError, TypeError, AttributeError):
        return
    try:
        write_bytes_atomic(folder / f"{key(identity)}.plan", data)
    except OSError:
        pass
