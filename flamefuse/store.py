"""The cache store: every kind of cache entry is named, stamped, checked and written here.

**Where.** ``cache_root()`` is ``$FLAMEFUSE_CACHE_DIR``, else the platform's user cache folder
(``platformdirs``, where installed), else ``$XDG_CACHE_HOME/flamefuse``, else
``~/.cache/flamefuse``. ``folder(kind) -> Path | None`` is its sub-folder of ``kind`` (one of
:data:`flamefuse.cache_store.TABLE`), created on first use (mode 0700) when it can be created
and written and only the user can write it (:mod:`flamefuse.trust`: the folder and the folders
from the cache root to it owned by the user and writable by nobody else, the folders above not
writable by others, and this user may create files in it: ``os.access``, no probe file); else
None after one ``RuntimeWarning``: flamefuse then runs without that cache. None too when the
kind is switched off (``FLAMEFUSE_CACHE=0`` for every kind, or the kind's own switch:
:mod:`flamefuse.switches`). The size cap (least recently used entries go,
:mod:`flamefuse.cache_store`) is checked when the first folder of a process is probed, at most
once a day. ``usable_cache_dir(kind)`` is ``folder`` without the switches.

**What an entry is.** A file ``<kind>/<name><ext>``: ``name`` is the caller's key when it is a
short identifier (a module name, a hex digest), else the first 32 hex digits of the key's
SHA-256 (``name(key)``). Its first line is the header (``header(kind, key)``)::

    # flamefuse-store 1 <kind> <stamp> <SHA-256 of the key>

(a Python comment, so a generated module is an entry too and runs as written), and the rest is
the payload: JSON, a module's source, plain bytes. ``stamp(kind)`` is the one identity stamp:
a digest of flamefuse's version, Python's, NumPy's, Numba's and llvmlite's
(:func:`flamefuse.identity.versions`), of the flamefuse source the kind depends on and, for
kinds that hold machine code or timings, of this machine (:func:`flamefuse.identity.machine`).

**Reading.** ``get(kind, key, ext) -> bytes | None`` returns the payload only when the folder
and the file pass :mod:`flamefuse.trust` (checked on the open descriptor, before anything is
read) and the header is this kind's, this stamp's and this key's; anything else (missing,
damaged, foreign, from another version or machine, another key) is a miss, never an error, and
the next ``put`` overwrites it. A hit sets the file's access time (its modification time is
kept: Numba's index compares it), the least-recently-used order of
:func:`flamefuse.cache_store.prune`. ``get_json`` decodes JSON (a miss when it does not decode).

**Writing.** ``put(kind, key, data, ext) -> Path | None`` writes header and payload to a
temporary file beside the entry and renames it over the entry (:mod:`flamefuse.files`): a
reader sees the old entry or the new one, never half of one. None when the kind has no folder
or the write failed (a full disk, a read-only folder): the caller goes on uncached.
``put_json`` encodes JSON. ``path(kind, key, ext)`` is where an entry is, for files the store
does not write itself (a native library linked by ``cc``, Numba's files), which are then
validated through an entry beside them (a library's digest sidecar). ``read(file, kind, key)``
and ``write(file, kind, key, data)`` are ``get`` and ``put`` at an explicit path (a tuning file
in a folder the caller chose). ``payload(file)`` is a file's payload without any check
(``flamefuse cache`` and tests).
"""
from __future__ import annotations

import functools
import os
import sys
import time
import warnings

from flamefuse import identity, jsontext, switches, trust
from flamefuse.cache_store import BY_NAME, maybe_prune
from flamefuse.digest import sha256

TYPE_CHECKING = False           # (not typing's: a plain run does not import typing or pathlib)
if TYPE_CHECKING:
    from pathlib import Path

FORMAT = 1
MAGIC = b"# flamefuse-store"
_WARNED: set = set()


# -- where ---------------------------------------------------------------------------------------

def cache_root() -> Path:
    from pathlib import Path
    return Path(_root())


def _root() -> str:
    """:func:`cache_root` as a string (the store's own reads and checks use ``os.path``
    strings: a run settled as plain NumPy imports no ``pathlib``, which NumPy does not import
    and which brings ``urllib.parse``, ``ipaddress`` and ``fnmatch``: about 4 ms)."""
    explicit = switches.text("FLAMEFUSE_CACHE_DIR")
    if explicit:
        return explicit
    xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME")
    if sys.platform == "linux" and "ANDROID_DATA" not in os.environ and (
            not xdg.strip() or (xdg == xdg.strip() and os.path.isabs(xdg))) and (
            home is None or os.path.isabs(home)):
        # what platformdirs answers on Linux, without importing it (it imports pathlib): an
        # absolute XDG_CACHE_HOME, else ~/.cache (tests/core/test_plain_paths.py); any other
        # setting is platformdirs' to read
        return os.path.join(xdg if xdg.strip() else os.path.expanduser("~/.cache"), "flamefuse")
    try:
        import platformdirs     # the platform's user cache folder (macOS, Windows, XDG on Linux)
    except ImportError:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(home, "flamefuse")
    return platformdirs.user_cache_dir("flamefuse", appauthor=False)


def enabled(kind: str) -> bool:
    """Whether ``kind`` is kept on disk (``FLAMEFUSE_CACHE`` and the kind's own switch)."""
    own = BY_NAME[kind].switch
    return switches.on("FLAMEFUSE_CACHE") and (own is None or switches.on(own))


def folder(kind: str) -> Path | None:
    """The folder of ``kind`` when it is switched on and usable (see the module doc), else None."""
    return _as_path(_folder(kind))


def _folder(kind: str) -> str | None:
    """:func:`folder` as a string."""
    return _usable(os.path.join(_root(), kind)) if enabled(kind) else None


def usable_cache_dir(name: str) -> Path | None:
    """The cache folder ``name`` if it can be created and written; else None (warned once).
    Probed once per folder and process."""
    return _as_path(_usable(os.path.join(_root(), name)))


def _as_path(where: str | None) -> Path | None:
    """``where`` as a ``Path`` for the store's callers (``pathlib`` imported here, not on the
    plain path, which uses the strings)."""
    if where is None:
        return None
    from pathlib import Path
    return Path(where)


@functools.lru_cache(maxsize=None)
def _usable(path: str) -> str | None:
    """:func:`usable_cache_dir`'s folder ``path`` (a string) when usable, else None."""
    root = _root()
    try:
        _make_private(path)
        why = trust.folder_problem(path, top=root)
        if why:
            trust.refuse(path, why)
            return None
        _writable(path)
        _pruned(root)
        return path
    except OSError as err:
        _warn_once(("dir", str(path)), f"flamefuse: the cache folder {path} cannot be used ({err}); "
                   "running without a disk cache (set FLAMEFUSE_CACHE_DIR to a writable folder)")
        return None


def _writable(path: str) -> None:
    """Raise ``OSError`` when this user cannot create files in the folder ``path`` (asked of
    the system, not by writing a probe file: a warm run that reads its entries writes nothing);
    a write that fails all the same (a full disk) is a warned miss (:func:`write`)."""
    effective = os.access in os.supports_effective_ids
    if not os.access(path, os.W_OK | os.X_OK, effective_ids=effective):
        import errno
        raise PermissionError(errno.EACCES, "not writable by this user", str(path))


@functools.lru_cache(maxsize=None)
def _pruned(root: str) -> None:
    """The store's size cap, checked once per process (:func:`flamefuse.cache_store.maybe_prune`)."""
    maybe_prune(root)


def _make_private(path: str) -> None:
    """Create ``path`` and any missing folder above it with mode 0700."""
    missing = []
    path = os.path.abspath(path)
    while not os.path.exists(path):
        missing.append(path)
        above = os.path.dirname(path)
        if above == path:
            break
        path = above
    for folder_ in reversed(missing):
        try:
            os.mkdir(folder_, 0o700)
        except FileExistsError:         # made by a process starting beside this one
            pass


def _warn_once(key, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


# -- names and stamps ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def stamp(kind: str) -> str:
    """The identity stamp of ``kind``'s entries (see the module doc)."""
    k = BY_NAME[kind]
    parts = [f"store {FORMAT}", identity.versions()]
    if k.sources:
        parts.append("source " + identity.source_digest(k.sources))
    if k.machine:
        parts.append("machine " + identity.machine())
    return sha256("\n".join(parts).encode()).hexdigest()[:24]


def name(key: str) -> str:
    """The file name (without extension) of the entry ``key``."""
    return key if _identifier(key) else sha256(key.encode()).hexdigest()[:32]


def _identifier(key: str) -> bool:
    """Whether ``key`` is a short identifier, a file name as it is: 1 to 100 ASCII letters,
    digits, ``_`` and ``-``, not starting with ``-`` (string methods, not a regular expression:
    compiling one costs every process about 0.1 ms)."""
    return (0 < len(key) <= 100 and key.isascii() and key[0] != "-"
            and key.replace("_", "a").replace("-", "a").isalnum())


def header(kind: str, key: str) -> bytes:
    digest = sha256(key.encode()).hexdigest()
    return b"%s %d %s %s %s\n" % (MAGIC, FORMAT, kind.encode(), stamp(kind).encode(), digest.encode())


def path(kind: str, key: str, ext: str) -> Path | None:
    """Where the entry ``key`` of ``kind`` with extension ``ext`` is (None: no folder)."""
    return _as_path(_file(kind, key, ext))


def _file(kind: str, key: str, ext: str) -> str | None:
    """:func:`path` as a string (the same folder and file name)."""
    where = _folder(kind)
    return None if where is None else os.path.join(where, f"{name(key)}{ext}")


# -- reading and writing -------------------------------------------------------------------------

def read(file: Path, kind: str, key: str) -> bytes | None:
    """The payload of the entry at ``file`` when it is trusted and stamped for ``kind`` and
    ``key``, else None (see the module doc)."""
    data = trust.read_trusted(file)
    if data is None:
        return None
    head = header(kind, key)
    if not data.startswith(head):
        return None
    _touch(file)
    return data[len(head):]


def _touch(file: Path) -> None:
    """Note a use: the access time now, the modification time kept."""
    try:
        st = os.stat(file, follow_symlinks=False)
        os.utime(file, ns=(time.time_ns(), st.st_mtime_ns), follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


def write(file: Path, kind: str, key: str, data) -> Path | None:
    """Write the entry at ``file`` (header and payload, all at once); None when it failed."""
    if isinstance(data, str):
        data = data.encode()
    from flamefuse.files import write_bytes_atomic     # (a warm run writes nothing)
    try:
        return write_bytes_atomic(file, header(kind, key) + data)
    except OSError as err:
        _warn_once(("write", kind), f"flamefuse: cannot write {file} ({err}); running without a disk cache")
        return None


def get(kind: str, key: str, ext: str) -> bytes | None:
    file = _file(kind, key, ext)
    return None if file is None else read(file, kind, key)


def put(kind: str, key: str, data, ext: str) -> Path | None:
    file = path(kind, key, ext)
    return None if file is None else write(file, kind, key, data)


def get_json(kind: str, key: str, ext: str = ".json"):
    """The decoded JSON of the entry, or None (a miss, or not JSON)."""
    data = get(kind, key, ext)
    if data is None:
        return None
    try:
        return jsontext.loads(data)     # (json.loads without importing json: flamefuse.jsontext)
    except ValueError:
        return None


def put_json(kind: str, key: str, value, ext: str = ".json") -> Path | None:
    import json                         # (a warm run writes nothing)
    return put(kind, key, json.dumps(value), ext)


def payload(file: Path) -> bytes | None:
    """The payload of a store file (its header line dropped), unchecked; None when unreadable or
    not a store file."""
    try:
        with open(file, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head, sep, rest = data.partition(b"\n")
    return rest if sep and head.startswith(MAGIC) else None


__all__ = ["FORMAT", "cache_root", "enabled", "folder", "get", "get_json", "header", "name", "path",
           "payload", "put", "put_json", "read", "stamp", "usable_cache_dir", "write"]
