"""``flamefuse cache info|clear|prune``: see and trim the cache folder (:mod:`flamefuse.cache_store`).

``info`` prints the location, whether it is used (or refused, and why: :mod:`flamefuse.trust`),
the files and bytes of every kind (:data:`flamefuse.cache_store.TABLE`) and what it holds, the
total and the size cap; ``clear`` removes every entry;
``prune [--max-size SIZE]`` removes the least recently used entries until the store fits
``SIZE`` (default: the cap, ``$FLAMEFUSE_CACHE_MAX`` or 2G). A folder that is not the user's
own is reported and never changed (exit 2).
"""
from __future__ import annotations

from flamefuse.errors import fail


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def run(args) -> int:
    from flamefuse import cache_store, trust
    from flamefuse.store import cache_root
    root = cache_root()
    why = trust.folder_problem(root) if root.exists() else None
    if args.action == "info":
        print(f"location: {root}")
        if not root.exists():
            print("status:   not created yet")
        else:
            print(f"status:   {'refused: ' + why if why else 'in use (private to this user)'}")
        cap = cache_store.max_bytes()
        total, used = 0, cache_store.usage(root) if root.exists() else {}
        for kind in cache_store.TABLE:          # every kind, in the table's order
            files, size = used.get(kind.name, (0, 0))
            print(f"  {kind.name:<9} {files:>7} files  {_size(size):>10}  {kind.holds}")
            total += size
        print(f"total:    {_size(total)} (cap {_size(cap) if cap else 'none'}; FLAMEFUSE_CACHE_MAX)")
        return 0
    if not root.exists():
        print(f"nothing to do: {root} does not exist")
        return 0
    if why:
        fail(f"the cache folder {root} is not this user's own private folder: {why}",
             hint="remove it as its owner, or set FLAMEFUSE_CACHE_DIR to another folder")
    if args.action == "clear":
        files, size = cache_store.clear(root)
    else:
        try:
            limit = cache_store.parse_size(args.max_size) if args.max_size else cache_store.max_bytes()
        except ValueError:
            fail(f"--max-size {args.max_size!r} is not a size", hint="e.g. 500M, 2G or 0 (remove everything)")
        files, size = cache_store.prune(root, limit) if limit else cache_store.clear(root)
    print(f"removed {files} files ({_size(size)}) from {root}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("cache", help="show (info), empty (clear) or trim (prune) the cache folder")
    p.add_argument("action", choices=("info", "clear", "prune"))
    p.add_argument("--max-size", metavar="SIZE", help="prune: keep at most SIZE (e.g. 500M, 2G; 0: remove all)")
    p.set_defaults(func=run)
