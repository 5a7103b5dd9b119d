"""The background compiler's process: ``python -m flamefuse.synth.worker <job file>``.

Started by :mod:`flamefuse.runtime.compiler` (detached, low priority); does one job (a JSON
entry of the store's kind ``jobs``, read only from the user's private cache folder and only when
trusted and stamped): each fused run-time kernel, loop nest, filter loop (named by its module
in the user's cache: :mod:`flamefuse.runtime.filter_native`) or compiled script loop
(:mod:`flamefuse.loops.code`) is built as a native library
(:func:`flamefuse.runtime.native.build_one`) under an exclusive lock of its library's name
(:func:`flamefuse.runtime.compiler._lock`: two workers never build one library), and, when it
cannot be built as one, compiled into Numba's disk cache instead; each linear-algebra segment
is synthesized and compiled by :func:`flamefuse.synth.background.build_chain`, and the kernels it
called are then built as native libraries too (:mod:`flamefuse.synth.native_chain`; an item of
kind ``chain-library`` is one such library, wanted by a script that found none). One item's
failure costs that item only; the job file is removed at the end, whatever happened
(``FLAMEFUSE_COMPILE_CRASH=1``, a test hook, makes the worker fail at once).
It lives here, above the run time and the synthesis it drives (docs/architecture.md's layers).
"""
from __future__ import annotations

import json
import os
import sys
import time

from flamefuse import store, switches
from flamefuse.runtime.compiler import _held, _lock, try_lock


def _build_kernel(item: dict) -> None:
    from flamefuse.runtime import native
    if item["kind"] == "nest":
        from flamefuse.loopnest.nestcode import NestCode
        code = NestCode.of(item["code"])
    elif item["kind"] == "filter":
        from flamefuse.runtime.filter_native import FilterCode
        code = FilterCode.of(item["code"])      # the kernel module's text from the user's own cache
    elif item["kind"] == "loop":
        from flamefuse.loops.code import LoopCode
        code = LoopCode.of(item["code"])        # the rendered loop's text from the user's own cache
    elif item["kind"] == "chain-library":
        from flamefuse.synth.native_chain import ChainCode
        code = ChainCode.of(item["code"])       # the module's text from the user's own cache
    else:
        from flamefuse.runtime.code import Code
        code = Code.of(item["code"])
    sig = tuple(item["sig"])
    folder = native._folder()
    if folder is None:
        return
    digest = native._digest(code.source, sig)
    fd = _lock(digest)
    if fd is None:
        return                  # another worker builds it
    try:
        if native.built(code.source, sig) or native.cannot_build(code.source, sig):
            return
        if not native.build_one(code, sig, folder) and native.cannot_build(code.source, sig) \
                and item["kind"] not in ("chain-library", "loop"):   # a chain's Numba kernel: compiled by build_chain
            _numba_cache(code, sig)     # no library: Numba's disk cache serves its inline compile
    finally:
        os.close(fd)


def _build_wanted() -> None:
    """Build the libraries this process wanted (a chain's kernels, called once by
    :func:`flamefuse.synth.background.build_chain` through Numba), each under its lock."""
    from flamefuse.runtime import compiler, native
    wanted = list(native._WANTED)
    native._WANTED.clear()
    for code, sig in wanted:
        try:
            _build_kernel(compiler._plain(("kernel", code, sig)))
        except Exception:      # noqa: BLE001 -- that library only: wanted again next run
            continue


def _numba_cache(code, sig) -> None:
    try:
        if type(code).__name__ == "NestCode":
            from flamefuse.loopnest.compile import _load
            _load(code.source)
        else:
            from flamefuse.runtime import native
            from flamefuse.runtime.kernel import compile_kernel
            compile_kernel(code.source).compile(native.numba_types(sig))
    except Exception:      # noqa: BLE001 -- the script compiles it inline then
        pass


def work(path) -> None:
    """Do the job at ``path`` (a jobs entry written by :func:`hand_over`), then remove it."""
    from pathlib import Path
    path = Path(path)
    folder = store.folder("jobs")
    if folder is None or path.parent.resolve() != folder.resolve():
        return                              # job files live in the user's own folder only
    fd = try_lock(path)
    if fd is None:
        return                              # another worker does it
    try:
        if switches.on("FLAMEFUSE_COMPILE_CRASH"):
            raise RuntimeError("FLAMEFUSE_COMPILE_CRASH=1: the background compiler fails (a test hook)")
        items = store.read(path, "jobs", path.stem)
        items = json.loads(items) if items is not None else []
        for item in items if isinstance(items, list) else []:
            try:
                if item.get("kind") == "chain":
                    from flamefuse.synth.background import build_chain
                    from flamefuse.synth.group import lapack_alone
                    build_chain(item, _lock, lapack_alone)
                    _build_wanted()
                elif item.get("kind") in ("kernel", "nest", "chain-library", "filter", "loop"):
                    _build_kernel(item)
            except Exception:      # noqa: BLE001 -- one item's failure costs that item only
                continue
    finally:
        try:
            path.unlink()
        except OSError:
            pass
        os.close(fd)
    _sweep(folder)


def _sweep(folder) -> None:
    """Remove abandoned job files (a worker that crashed hard) older than a day."""
    for f in folder.glob("job-*.json"):
        try:
            if time.time() - f.stat().st_mtime > 86400 and not _held(f):
                f.unlink()
        except OSError:
            pass


def main(argv: list) -> int:
    try:
        os.nice(10)
    except (OSError, AttributeError):
        pass
    if len(argv) != 1:
        return 2
    work(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
