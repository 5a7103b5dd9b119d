"""``flamefuse fuse SCRIPT [ARGS...]``: run a NumPy script on flamefuse.lazy and summarise.

The script runs as ``__main__`` with its own ``import numpy`` (and
``from numpy import ...``) answered by :mod:`flamefuse.lazy`, ``numpy.linalg``
(``import numpy.linalg as la``, ``from numpy.linalg import cholesky``) by
:mod:`flamefuse.lazy.linalg` and its
``scipy.linalg`` by :mod:`flamefuse.lazy.scipy_linalg`; modules it
imports keep the real NumPy. Afterwards pending work is flushed and a summary
is printed to stderr: operations recorded and run eagerly, flushes, blocks,
plans built vs reused (merge cache), kernels compiled vs memory/disk cache
hits, Numba's compile or cache-load time per kernel, NumPy's own
implementations used (no warning) and fallbacks by name, external calls, and
linear-algebra groups, and
wall time. ``--partitioner`` and ``--eager-below`` configure the runtime; ``--explain``
also prints one ``linalg:`` line per chain of recorded linear-algebra calls
(:mod:`flamefuse.synth.explain`).

Start-up: ``flamefuse fuse`` imports only this command's module (not OR-Tools,
the clustering or loop-nest machinery, which load when a program needs them), and
the kernels the script used last time are loaded in a thread while it starts
(:func:`warm_numba`): their native libraries, and Numba (its one-time target set-up
too) only for kernels that have none. After the script, the kernels this run loaded
through Numba are built as native libraries for the next run
(:mod:`flamefuse.runtime.native`, with ``cc``; ``FLAMEFUSE_NATIVE=0`` turns that off).
"""
from __future__ import annotations

import builtins
import sys
import time
from pathlib import Path

from flamefuse.errors import fail


def _importer(lazy):
    real = builtins.__import__
    scipy_proxy = []

    def importer(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "numpy"):
            return lazy
        if level == 0 and name == "numpy.linalg":       # import numpy.linalg as la; from numpy.linalg import ...
            return lazy.linalg if fromlist else lazy
        if level == 0 and name == "scipy.linalg" and fromlist:
            from flamefuse.lazy import scipy_linalg
            return scipy_linalg
        if level == 0 and name in ("scipy", "scipy.linalg"):
            if not scipy_proxy:
                scipy_proxy.append(_scipy_proxy(real("scipy", globals, locals, (), 0)))
            return scipy_proxy[0]
        return real(name, globals, locals, fromlist, level)
    return importer


def _scipy_proxy(scipy):
    """The ``scipy`` package as the script sees it: ``scipy.linalg`` is flamefuse.lazy's."""
    import types

    from flamefuse.lazy import scipy_linalg

    class Scipy(types.ModuleType):
        def __getattr__(self, name):
            if name == "linalg":
                return scipy_linalg
            import importlib
            try:
                return getattr(scipy, name)
            except AttributeError:
                return importlib.import_module(f"scipy.{name}")
    return Scipy("scipy", scipy.__doc__)


def run_script(path: Path, argv: list[str]) -> None:
    import flamefuse.lazy as lazy
    try:
        source = path.read_text()
    except OSError as err:
        fail(f"cannot read script: {err.strerror}", file=str(path))
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as err:
        fail(f"syntax error: {err.msg}", file=str(path), line=err.lineno, col=err.offset)
    namespace = {"__name__": "__main__", "__file__": str(path),
                 "__builtins__": dict(vars(builtins), __import__=_importer(lazy))}
    saved = sys.argv
    sys.argv = [str(path)] + list(argv)
    try:
        exec(code, namespace)
        lazy.flush()
    finally:
        sys.argv = saved


def summary(stats: dict, seconds: float) -> str:
    g = stats.get
    lines = [f"flamefuse fuse: {seconds:.3f} s, partitioner {g('partitioner')}",
             f"  operations recorded {g('recorded', 0)}, run eagerly {g('eager', 0)}, "
             f"flushes {g('flushes', 0)}, blocks {g('blocks', 0)}",
             f"  plans built {g('plans_built', 0)}, reused {g('plan_hits', 0)}, loaded from disk "
             f"{g('plan_loads', 0)} ({g('plan_cache_s', 0):.3f} s); kernels compiled "
             f"{g('kernels_compiled', 0)}, disk cache hits {g('kernels_disk_hits', 0)}, "
             f"memory cache hits {g('kernels_memory_hits', 0)}",
             f"  partition {g('partition_s', 0):.3f} s, kernel generation {g('compile_s', 0):.3f} s,"
             f" first kernel calls (Numba JIT or cache load) {g('first_call_s', 0):.3f} s",
             f"  kernels loaded at start-up (used last time) {g('kernels_preloaded', 0)}; "
             f"native libraries loaded {g('native_libraries', 0)} "
             f"({1e3 * g('native_load_s', 0) / max(1, g('native_libraries', 0)):.2f} ms each), "
             f"used by {g('native_loads', 0)} kernel calls",
             f"  Numba compile or cache load {g('load_s', 0):.3f} s for {g('loads', 0)} kernels "
             f"({1e3 * g('load_s', 0) / max(1, g('loads', 0)):.1f} ms each)",
             f"  NumPy's own implementation (no warning) {g('native', 0)}" + "".join(
                 f"\n    {name}: {n}" for name, n in sorted(g("native_names", {}).items())),
             f"  fallbacks {g('fallbacks', 0)}" + "".join(
                 f"\n    {name}: {n}" for name, n in sorted(g("fallback_names", {}).items())),
             f"  external calls {g('external', 0)}; product groups {g('loopnest_groups', 0)} "
             f"with {g('loopnest_products', 0)} products ({g('blas_products', 0)} NumPy calls, the "
             f"rest loop nests); linear-algebra groups "
             f"{g('linalg_groups', 0)} with {g('linalg_calls', 0)} calls"]
    return "\n".join(lines)


def warm_numba(script: Path) -> None:
    """The kernels ``script`` used last time (:mod:`flamefuse.runtime.preload`), loaded in a
    thread while the script starts: their native libraries, and only when some kernel has none
    (or the script has no record yet) Numba's one-time set-up (its target's registries: about
    0.3 s, under Numba's compiler lock, so a kernel load waits for it) and its cache loads."""
    from flamefuse.lazy.recorder import STATS
    from flamefuse.runtime import preload
    STATS["kernels_preloaded"] += preload.load(script, _set_up_numba)


def _set_up_numba() -> None:
    from numba.core import compiler_lock
    from numba.core.registry import cpu_target

    from flamefuse.runtime.kernel import _numba
    _numba()
    with compiler_lock.global_compiler_lock:
        cpu_target.target_context.refresh()


def build_native() -> None:
    """Build the native libraries of the kernels this run loaded through Numba (for the next
    run: :mod:`flamefuse.runtime.native`), saying so on stderr."""
    from flamefuse.runtime import native

    tty, said = sys.stderr.isatty(), []

    def progress(k, total):
        said.append(k)
        if tty or k == 0:
            print(f"{chr(13) if tty else ''}flamefuse fuse: building {total} native kernels for "
                  f"the next run{f': {k + 1}/{total}' if tty else ''}", end="", file=sys.stderr,
                  flush=True)
    t0 = time.perf_counter()
    built = native.build_wanted(progress)
    if said:
        print(f" ({built} built in {time.perf_counter() - t0:.1f} s; FLAMEFUSE_NATIVE=0 turns "
              "this off)", file=sys.stderr)


def run(args) -> int:
    import threading

    import flamefuse.lazy as lazy
    path = Path(args.script)
    if not path.is_file():
        fail(f"no such script: {path}")
    lazy.configure(partitioner=args.partitioner, eager_below=args.eager_below)
    lazy.reset_stats()
    warm = threading.Thread(target=warm_numba, args=(path,), name="flamefuse-warm-numba", daemon=True)
    warm.start()
    from flamefuse.synth import explain
    explain.reset()
    t0 = time.perf_counter()
    run_script(path, args.args)      # (the warm-up thread is a daemon: a short script need not wait)
    seconds = time.perf_counter() - t0
    from flamefuse.runtime import preload
    preload.save(path)
    build_native()
    if args.explain:
        for line in explain.report():
            print(line, file=sys.stderr)
    print(summary(lazy.stats(), seconds), file=sys.stderr)
    return 0


def register(sub) -> None:
    from flamefuse.runtime.partition import PARTITIONERS
    p = sub.add_parser("fuse", help="run a NumPy script with numpy replaced by flamefuse.lazy",
                       epilog="After the first run each kernel is kept as a native library "
                              "(built with cc) so later runs load it without Numba; "
                              "FLAMEFUSE_NATIVE=0 turns that off.")
    p.add_argument("script", help="path of the Python script")
    p.add_argument("args", nargs="*", help="arguments for the script")
    p.add_argument("--partitioner", default="greedy", choices=sorted([*PARTITIONERS, "cluster"]),
                   help="WSP partitioner for stages without filters, or cluster (every stage by the "
                        "clustering ILP); stages with x[mask] are always clustered")
    p.add_argument("--eager-below", type=int, default=1 << 15,
                   help="run operations on computed inputs smaller than this eagerly (elements)")
    p.add_argument("--explain", action="store_true",
                   help="print one 'linalg:' line per chain of recorded linear-algebra calls: the "
                        "library operations in order and the fused kernel they ran as, or why not")
    p.set_defaults(func=run)
