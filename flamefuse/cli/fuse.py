"""``flamefuse fuse SCRIPT [ARGS...]``: run a NumPy script on flamefuse.lazy and summarise.

The script runs as ``python SCRIPT ARGS`` runs it (:func:`run_script`): as the real
``__main__`` module (``sys.modules['__main__']``, so functions it defines pickle by reference for
``multiprocessing``, and ``spawn``/``forkserver`` children find it by its ``__file__``), with
``sys.argv`` its own (``argv[0]`` as given, ``__file__`` absolute) and its folder first on
``sys.path``; its own ``import numpy`` (and
``from numpy import ...``) is answered by :mod:`flamefuse.lazy`, ``numpy.linalg``
(``import numpy.linalg as la``, ``from numpy.linalg import cholesky``) by
:mod:`flamefuse.lazy.linalg` and its
``scipy.linalg`` by :mod:`flamefuse.lazy.scipy_linalg`, its ``time`` by
:mod:`flamefuse.lazy.clock` (a clock read runs the pending work first), its ``warnings`` by
:func:`flamefuse.lazy.fpstate.warnings_module` (a ``catch_warnings`` block or a filter change
runs the pending work first, so NumPy's warnings land under the filters they were made under); modules it
imports keep the real NumPy (a ``spawn`` child, a new interpreter, runs it on NumPy).

On every way out -- the end, ``sys.exit(code)``, an uncaught exception -- its non-daemon
threads are waited for (as the interpreter does), pending work is flushed, the kernel list is
saved, the native libraries are built (with ``FLAMEFUSE_COMPILE=background``, the default:
handed to the background compiler, :mod:`flamefuse.runtime.compiler`, which the command does
not wait for unless ``--wait``) and a summary is printed to stderr: operations recorded
and run eagerly, flushes, blocks, plans built vs reused (merge cache), kernels compiled vs
memory/disk cache hits, Numba's compile or cache-load time per kernel, NumPy's own
implementations used (no warning) and fallbacks by name, external calls, and linear-algebra
groups, and wall time. The exit status is the script's: ``sys.exit``'s code (a non-integer code
printed, 1), 1 after an uncaught exception (its traceback printed through ``sys.excepthook``,
without flamefuse's frames), 130 after Ctrl-C (no native build then). ``--partitioner`` and
``--eager-below`` configure the runtime; ``--explain`` also prints one ``linalg:`` line per chain
of recorded linear-algebra calls (:mod:`flamefuse.synth.explain`).

Start-up: ``flamefuse fuse`` imports only this command's module (not OR-Tools,
the clustering or loop-nest machinery, which load when a program needs them), and
the kernels the script used last time are loaded in a thread while it starts
(:mod:`flamefuse.runtime.preload`): their native libraries, and through Numba those that have
none -- Numba itself is then imported and set up here, before that thread and the script
start (:func:`_set_up_numba`; its import and set-up are not thread-safe). After the script, the
kernels this run loaded through Numba are built as native libraries for the next run
(:mod:`flamefuse.runtime.native`, with ``cc``; ``FLAMEFUSE_NATIVE=0`` turns that off).

Compiled loops: :func:`compile_script` compiles the script with its qualifying ``for ... in
range`` loops behind a guard (:mod:`flamefuse.loops`; ``FLAMEFUSE_LOOPS=0`` turns it off), in
both modes (fused and plain NumPy); :func:`run_script` gives the script's globals the guard;
``--explain`` prints one line per loop site and the summary one line for them all.
"""
from __future__ import annotations

import builtins
import os
import sys
import time


def fail(message: str, **where):
    """:func:`flamefuse.errors.fail` (imported when a run fails: start-up)."""
    from flamefuse.errors import fail as failed
    failed(message, **where)


def _importer(lazy):
    real = builtins.__import__
    scipy_proxy = []
    clock = []
    warn = []

    def importer(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "numpy"):
            return lazy
        if level == 0 and name == "numpy.linalg":       # import numpy.linalg as la; from numpy.linalg import ...
            return lazy.linalg if fromlist else lazy
        if level == 0 and name == "scipy.linalg" and fromlist:
            from flamefuse.lazy import scipy_linalg
            return scipy_linalg
        if level == 0 and name == "time":     # a clock read is a sync point (flamefuse.lazy.clock)
            if not clock:
                from flamefuse.lazy import clock as _clock
                clock.append(_clock.module(lazy.flush))
            return clock[0]
        if level == 0 and name == "warnings":     # filter changes are sync points (flamefuse.lazy.fpstate)
            if not warn:
                from flamefuse.lazy import fpstate
                warn.append(fpstate.warnings_module())
            return warn[0]
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


def read_script(path) -> bytes:
    """The script's bytes (a clear error, exit 2, when it cannot be read); ``path`` a string or
    a ``pathlib.Path`` (this module's own paths are strings: a run settled as plain NumPy
    imports no ``pathlib``, docs/startup.md)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        fail(f"cannot read script: {err.strerror}", file=str(path))


def compile_script(path, source: bytes | None = None):
    """The script's code object, compiled from its bytes as ``python`` compiles a script (a
    byte-order mark or ``# -*- coding: ... -*-`` line names its encoding, else UTF-8); a clear
    error, exit 2, when it cannot be read or compiled."""
    if source is None:
        source = read_script(path)
    try:
        from flamefuse import switches
        name = os.path.abspath(path)                # as ``python SCRIPT`` names it
        if b"range(" in source and switches.on("FLAMEFUSE_LOOPS"):   # its loops guarded (flamefuse.loops)
            from flamefuse.loops.kept import compile_script as compile_loops
            return compile_loops(source, name)      # (kept per script digest: flamefuse.loops.kept)
        return compile(source, name, "exec", dont_inherit=True)    # (not this module's __future__)
    except SyntaxError as err:
        fail(f"syntax error: {err.msg}", file=str(path), line=err.lineno, col=err.offset)


def run_script(path, code, argv: list[str], fused: bool = True) -> None:
    """Run the script's ``code`` as ``__main__`` (see the module doc) on flamefuse.lazy
    (``fused``), or on the real NumPy (a script that fusing did not pay for last time:
    :mod:`flamefuse.runtime.adapt`); its exceptions (``SystemExit`` too) propagate.
    ``sys.argv``, ``sys.path`` and ``sys.modules['__main__']`` are restored afterwards, once
    the non-daemon threads the script started have ended."""
    import types

    main = types.ModuleType("__main__")
    if fused:
        import flamefuse.lazy as lazy
        own = dict(vars(builtins), __import__=_importer(lazy))
    else:
        own = builtins
    main.__dict__.update(__file__=os.path.abspath(path), __cached__=None, __loader__=None,
                         __spec__=None, __builtins__=own)
    loops = sys.modules.get("flamefuse.loops.site")
    if loops is not None and loops.compilable():    # the script's compiled loops' guard (compile_script)
        from flamefuse.loops.guard import install
        install(main.__dict__)
    saved = sys.argv, sys.modules.get("__main__"), list(sys.path)
    sys.argv = [_shown(path)] + list(argv)
    sys.modules["__main__"] = main
    sys.path[:1] = [os.path.dirname(os.path.realpath(path))]
    threading = sys.modules.get("threading")    # (not imported for a script that starts no thread)
    before = set(threading.enumerate()) if threading is not None else set()
    try:
        try:
            exec(code, main.__dict__)
        finally:
            _join_threads(before)
    finally:
        sys.argv = saved[0]
        if saved[1] is not None:
            sys.modules["__main__"] = saved[1]
        sys.path[:] = saved[2]


def _join_threads(before: set) -> None:
    """Wait for the non-daemon threads started since ``before`` (the interpreter waits for them
    before it exits), except the idle workers of a ``ThreadPoolExecutor`` the script left open
    (the interpreter stops those at its exit; waiting for them here would never end). A process
    that never imported ``threading`` has no such thread (a plain run of a script that starts
    none): nothing is imported or waited for then (start-up: docs/startup.md)."""
    threading = sys.modules.get("threading")
    if threading is None:
        return
    while True:
        alive = [t for t in threading.enumerate() if t not in before and not t.daemon
                 and t is not threading.current_thread() and getattr(getattr(
                     t, "_target", None), "__module__", None) != "concurrent.futures.thread"]
        if not alive:
            return
        for t in alive:
            t.join()


def _outcome(err: BaseException | None) -> int:
    """The exit status ``python SCRIPT`` has after ``err`` (None: the script ended), with the
    traceback or ``sys.exit`` message printed as Python prints them."""
    if err is None:
        return 0
    if isinstance(err, SystemExit):
        code = err.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next             # flamefuse's own frames (run_script's exec)
    sys.stderr.flush()
    sys.excepthook(type(err), err.with_traceback(tb), tb)
    return 130 if isinstance(err, KeyboardInterrupt) else 1


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
             f"  flamefuse's own start-up {g('startup_s', 0):.3f} s (from its import to the script's "
             f"first line: imports, NumPy's included, decisions, kernel list, preload start), exit "
             f"{g('exit_s', 0):.3f} s (decisions and kernel list kept, native libraries built)",
             f"  Numba compile or cache load {g('load_s', 0):.3f} s for {g('loads', 0)} kernels "
             f"({1e3 * g('load_s', 0) / max(1, g('loads', 0)):.1f} ms each)",
             f"  NumPy's own implementation (no warning) {g('native', 0)}" + "".join(
                 f"\n    {name}: {n}" for name, n in sorted(g("native_names", {}).items())),
             f"  fallbacks {g('fallbacks', 0)}" + "".join(
                 f"\n    {name}: {n}" for name, n in sorted(g("fallback_names", {}).items())),
             f"  compiled in the background (FLAMEFUSE_COMPILE): {g('background_wanted', 0)} kernels or "
             f"chains handed to {g('background_workers', 0)} compiler processes; meanwhile "
             f"{g('background_deferred_flushes', 0)} flushes ({g('background_deferred_ops', 0)} operations) "
             f"ran as NumPy, {g('background_deferred_loops', 0)} filter loops "
             f"({g('background_deferred_loop_ops', 0)} operations) as NumPy's calls, "
             f"{g('background_deferred_chains', 0)} linear-algebra chains as LAPACK "
             f"calls and {g('background_deferred_groups', 0)} product groups as NumPy's calls; "
             f"{g('background_picked_up', 0)} kernels picked up when built",
             f"  external calls {g('external', 0)}; product groups {g('loopnest_groups', 0)} "
             f"with {g('loopnest_products', 0)} products ({g('blas_products', 0)} NumPy calls, the "
             f"rest loop nests); linear-algebra groups "
             f"{g('linalg_groups', 0)} with {g('linalg_calls', 0)} calls"]
    return "\n".join(lines)


def _set_up_numba() -> None:
    """Import Numba and set its CPU target up (its registries: about 0.3 s), in this thread."""
    from flamefuse.jit import set_up_target
    set_up_target()


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
    from flamefuse.runtime import compiler
    if compiler.background():       # the background compiler builds them: the script need not wait
        compiler.hand_over(list(native._WANTED))
        native._WANTED.clear()
        return
    t0 = time.perf_counter()
    built = native.build_wanted(progress)
    if said:
        print(f" ({built} built in {time.perf_counter() - t0:.1f} s; FLAMEFUSE_NATIVE=0 turns "
              "this off)", file=sys.stderr)


def _shown(path) -> str:
    """``str(pathlib.Path(path))``: the script's name as this command has always shown it and
    given it as ``sys.argv[0]`` (empty and ``.`` parts and a trailing ``/`` dropped), without
    importing ``pathlib``."""
    path = os.fspath(path)
    if os.sep != "/" or not path:
        from pathlib import Path
        return str(Path(path))
    root = "//" if path.startswith("//") and not path.startswith("///") else "/" if path.startswith("/") else ""
    parts = [p for p in path.split("/") if p and p != "."]
    return root + "/".join(parts) or "."


def _started() -> float:
    """When flamefuse's command line was imported (:data:`flamefuse.cli.STARTED`)."""
    from flamefuse.cli import STARTED
    return STARTED


def run(args) -> int:
    # a run settled as plain NumPy reads its decisions (adapt_entry) and runs the script: it
    # imports neither adaptive fusion's model nor flamefuse.lazy (start-up: docs/startup.md)
    from flamefuse.runtime import adapt_entry, probe
    path = _shown(args.script)
    if not os.path.isfile(path):
        fail(f"no such script: {path}")
    source = read_script(path)
    code = compile_script(path, source)
    # its entries' key even if the script changes folder (``Path.absolute``: no ``..`` resolved
    # before the links are: the keys resolve it, ``os.path.realpath``, as ``Path.resolve`` does)
    here = os.path.join(os.getcwd(), path)
    loaded = decisions = None if args.no_adapt else adapt_entry.load(here, args.args, source)
    if probe.wants_plain(decisions):
        return _run_plain(args, path, code, here, decisions, probing=True)
    if probe.expired(decisions):    # a probe's NumPy verdict is old: fused again, measured again
        decisions = dict(decisions, mode="fused")
    if decisions is not None and decisions["mode"] == "numpy":
        return _run_plain(args, path, code, here, decisions, probing=False)
    from flamefuse.runtime import adapt
    import flamefuse.lazy as lazy
    from flamefuse.lazy.recorder import STATS
    from flamefuse.runtime import preload
    adapt.start(decisions)
    # the script sees NumPy's warnings only (no FallbackWarning in its catch_warnings lists, none
    # raised by -W error): the summary names the fallbacks
    lazy.configure(partitioner=args.partitioner, eager_below=args.eager_below, fallback_warnings=False)
    lazy.reset_stats()

    def preloaded(n):
        STATS["kernels_preloaded"] += n
    preload.start(preload.kernels(here), _set_up_numba, preloaded)   # (a daemon thread)
    explain = sys.modules.get("flamefuse.synth.explain")    # (its lines of an earlier run in
    if explain is not None:                                 # this process; else not imported)
        explain.reset()
    t0 = time.perf_counter()
    startup_s = t0 - _started()
    err = None
    try:
        run_script(path, code, args.args)
    except BaseException as e:      # noqa: BLE001 -- the script's way out, reported as Python's
        err = e
    if err is None or isinstance(err, SystemExit):
        try:
            lazy.flush()
        except Exception as e:      # noqa: BLE001 -- pending work failed: the script's error
            err = e
        seconds = time.perf_counter() - t0
        status = _outcome(err)
    else:
        seconds = time.perf_counter() - t0
        status = _outcome(err)      # the traceback first, as Python prints it
        _quiet_flush(lazy)
    lazy.configure(fallback_warnings=True)      # the script is done (a caller in-process warns again)
    t_exit = time.perf_counter()
    learned = judged = adapt.decide(adapt.STATE.tallies, adapt.STATE.numpy_sites)
    adapt.stop()
    if adapt.enabled():
        # the probe's measure: flamefuse's start-up and the script, to its last flush
        learned = probe.after_fused(judged, decisions, probe.measured("fused", startup_s + seconds),
                                    ok=status == 0)
        adapt.save(here, args.args, learned, loaded)
    preload.save(here)
    if not isinstance(err, KeyboardInterrupt):
        build_native()
    exit_s = time.perf_counter() - t_exit
    if args.wait:
        _wait_for_compiles()
    if args.explain:
        from flamefuse.runtime import compiler
        from flamefuse.synth import explain
        for line in compiler.explain():
            print(line, file=sys.stderr)
        for line in _loop_lines() + explain.report() + adapt.explain(judged) + probe.explain(
                learned, overruled=(judged["mode"], judged["numpy_sites"]) != (
                    learned["mode"], learned.get("numpy_sites"))):
            print(line, file=sys.stderr)
    print(summary(lazy.stats() | {"startup_s": startup_s, "exit_s": exit_s}, seconds), file=sys.stderr)
    _loop_summary()
    return status


def _loop_lines() -> list[str]:
    """``--explain``'s lines of the script's loop sites (:mod:`flamefuse.loops.site`)."""
    sites = sys.modules.get("flamefuse.loops.site")
    return sites.explain() if sites is not None else []


def _loop_summary() -> None:
    sites = sys.modules.get("flamefuse.loops.site")
    line = sites.summary() if sites is not None else None
    if line:
        print(line, file=sys.stderr)


def _run_plain(args, path: str, code, here: str, decisions: dict, probing: bool) -> int:
    """Run the script on the real NumPy: it was decided NumPy's (by the model, or by a probe's
    measures), or this run is a probe's plain run (``probing``: its measure is kept and the
    probe's verdict made, :mod:`flamefuse.runtime.probe`)."""
    from flamefuse.runtime import probe
    if probing:     # NumPy imported before the script's clock starts, as a fused run has it: the
        import numpy  # noqa: F401  (probe compares the two measures; else the script imports it)
    t0 = time.perf_counter()
    err = None
    try:
        run_script(path, code, args.args, fused=False)
    except BaseException as e:  # noqa: BLE001 -- the script's way out, reported as Python's
        err = e
    t1 = time.perf_counter()
    status = _outcome(err)
    shown = decisions
    if probing and status == 0:
        from flamefuse.runtime import adapt
        shown = probe.after_plain(decisions, probe.measured("numpy", t1 - _started()))
        adapt.save(here, args.args, shown, decisions)
    p = probe.state(decisions)
    if probing:
        why = ("adaptive fusion's probe: compared with the fused run "
               f"({probe.state(shown)['fused'][-1]:.3f} s measured)")
    elif p is not None and p["verdict"] == "numpy":
        why = (f"measured faster than fused (fused {min(p['fused']):.3f} s, NumPy "
               f"{min(p['numpy']):.3f} s, start-up and script; --no-adapt fuses it "
               "and learns again)")
    else:
        why = (f"fusing it did not pay last run (fused {decisions['fused_s']:.3f} s against NumPy's "
               f"estimated {decisions['numpy_s']:.3f} s; --no-adapt fuses it and learns again)")
    print(f"flamefuse fuse: {t1 - t0:.3f} s, ran as plain NumPy: {why}; flamefuse's own start-up "
          f"{t0 - _started():.3f} s", file=sys.stderr)
    _loop_summary()
    if args.wait:
        _wait_for_compiles()
    if args.explain:
        for line in _loop_lines() + probe.explain(shown):
            print(line, file=sys.stderr)
    return status


def _wait_for_compiles() -> None:
    """``--wait``: wait for the kernels compiling in the background (:mod:`flamefuse.runtime.compiler`)."""
    from flamefuse.runtime import compiler
    t0 = time.perf_counter()
    compiler.wait()
    print(f"flamefuse fuse: waited {time.perf_counter() - t0:.1f} s for the background compiler",
          file=sys.stderr)


def _quiet_flush(lazy) -> None:
    """Run what is still pending (its kernels are kept for the next run), after the script
    failed: a second error is not reported."""
    try:
        lazy.flush()
    except Exception:               # noqa: BLE001
        pass


# runtime.partition.PARTITIONERS' names (tests/runtime/test_adapt.py checks): the parser is built
# without importing the partitioners, which a script run as plain NumPy never needs
PARTITIONER_NAMES = ("singleton", "linear", "greedy", "unintrusive", "optimal", "cpsat")


OPTIONS = {"partitioner": None, "eager_below": None, "no_adapt": False, "explain": False, "wait": False}
FLAGS = {"--no-adapt": "no_adapt", "--explain": "explain", "--wait": "wait"}
"""The options of ``flamefuse fuse`` and their defaults (:func:`register` gives argparse the same).
``None``: the recorder's own setting (``FLAMEFUSE_PARTITIONER``, ``FLAMEFUSE_EAGER_BELOW``; greedy
and 32768 when unset), so an option not given leaves the switch in force."""


def quick_args(argv: list[str]):
    """``argv`` (after ``fuse``) parsed as :func:`register`'s parser parses it, without importing
    argparse (about 4 ms of a process's start-up, with what it imports), for the common forms
    only: the flags of :data:`FLAGS` spelled out, then a script that does not
    start with ``-``, then the script's own arguments, whatever they are. Any other form
    (``-h``, ``--partitioner``, an abbreviation, an error) gives None: argparse parses it."""
    import types

    values = dict(OPTIONS)
    for k, word in enumerate(argv):
        if word in FLAGS:
            values[FLAGS[word]] = True
        elif word.startswith("-"):
            return None
        else:
            return types.SimpleNamespace(command="fuse", script=word, args=list(argv[k + 1:]),
                                         **values, func=run)
    return None


def register(sub) -> None:
    import argparse

    p = sub.add_parser("fuse", help="run a NumPy script with numpy replaced by flamefuse.lazy",
                       epilog="After the first run each kernel is kept as a native library "
                              "(built with cc) so later runs load it without Numba; "
                              "FLAMEFUSE_NATIVE=0 turns that off.")
    p.add_argument("script",
                   help="path of the Python script (this command's options go before it)")
    p.add_argument("args", nargs=argparse.REMAINDER,
                   help="arguments for the script, options too (its sys.argv[1:], as with python)")
    p.add_argument("--partitioner", default=OPTIONS["partitioner"], choices=sorted([*PARTITIONER_NAMES, "cluster"]),
                   help="WSP partitioner for stages without filters, or cluster (every stage by the "
                        "clustering ILP); stages with x[mask] are always clustered (default: "
                        "FLAMEFUSE_PARTITIONER, else greedy)")
    p.add_argument("--eager-below", type=int, default=OPTIONS["eager_below"],
                   help="run operations on computed inputs smaller than this eagerly (elements; "
                        "default: FLAMEFUSE_EAGER_BELOW, else 32768)")
    p.add_argument("--no-adapt", action="store_true",
                   help="fuse every site, even where fusing did not pay last run (and learn again); "
                        "FLAMEFUSE_ADAPT=0 turns adaptive fusion off altogether")
    p.add_argument("--explain", action="store_true",
                   help="print one 'linalg:' line per chain of recorded linear-algebra calls: the "
                        "library operations in order and the fused kernel they ran as, or why not")
    p.add_argument("--wait", action="store_true",
                   help="after the script, wait for the kernels it left compiling in the background "
                        "(FLAMEFUSE_COMPILE=background, the default), so the next run uses them")
    p.set_defaults(func=run)
