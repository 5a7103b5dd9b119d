"""The run-time side of a compiled loop: check the arguments, run the library, or say no.

The rewritten script (:mod:`flamefuse.loops.rewrite`) calls ``run(index, args)`` where the loop
stood; ``args`` is the tuple of the site's parameters then its functions (``np``, ``range``,
``abs``, ``min``, ``max`` as the loop names them), or None when one of them had no value. True
means the compiled loop ran and its writes stand; False means the loop runs as written, as it
would have without flamefuse (the caller's ``if not run(...)`` does that). It returns False when:

* a function is not NumPy's or Python's own (``np`` must be the ``numpy`` module, or
  ``flamefuse.lazy`` under ``flamefuse fuse``; ``range``, ``abs``, ``min``, ``max`` the built-ins);
* an argument is not of a compiled type: an array must be exactly a ``numpy.ndarray`` (no
  subclass; a :class:`flamefuse.lazy.array.LazyArray` is first made one with its ``__array__``,
  which flushes its pending work and exports its memory, so the writes land in its storage) of
  native float64, C-contiguous, aligned, writeable where written, every extent below 2**30;
  a number a Python ``int`` (not ``bool``) or ``np.int64`` below 2**31 in magnitude (a narrower
  or unsigned NumPy integer is refused: ``np.uint8(0) - 1`` wraps to 255, with a warning), or a
  Python ``float`` or ``np.float64``;
* NumPy's functions the loop calls (``np.sqrt``, ``np.abs``, ``np.dot``, ``np.outer``) are NumPy's own (not
  replaced by the script), and this platform's floating-point flags can be read
  (:data:`flamefuse.runtime.fpflags.AVAILABLE`: without them no warning could be seen);
* a written array may share memory with another array argument that is not the same object
  (``np.may_share_memory``: bounds only, cheap; the same object twice is fine);
* the loop cannot be rendered for these types (:mod:`flamefuse.loops.render`), its library
  cannot be built, or it is still compiling in the background (``FLAMEFUSE_COMPILE=background``:
  :func:`flamefuse.runtime.compiler.library` wants it; ``inline`` builds it here and now);
* the site was measured faster as written: when copying the written arrays took most of a
  compiled call (a short loop writing into a large array), or a whole compiled call, guard
  included, took under :data:`SHORT_S` (a loop of a few iterations, whose guard may cost more
  than the loop), the next call runs as written and is timed (the rewrite marks its end:
  ``run(-1 - index, None)``); from then on the faster of the two ways runs (first calls, with
  their imports and library loads, are not counted);
* the compiled loop raised (an index out of range, lengths that differ), or it raised a
  floating-point flag NumPy or Python would report: divide by zero, overflow or invalid, or
  underflow while ``np.geterr()['under']`` is not ``ignore``. Every written array is copied
  before the call and restored from the copy, so the loop as written starts from the same
  state and gives the user Python's and NumPy's own exception, warning or ``ZeroDivisionError``.

``install(namespace)`` gives the script's globals ``run`` (where a site is compilable);
``reset()`` empties the tallies. The running script's sites (``SITES``), its text (``SCRIPT``),
the tallies (``STATE``) and ``explain()`` / ``summary()`` (``--explain``'s lines and the summary's)
are :mod:`flamefuse.loops.site`'s, filled by the rewrite or, on a warm run, from the store
(:mod:`flamefuse.loops.kept`: a site's AST node is then found again only where a loop must be
rendered and its text is not kept); a script whose sites are all refused imports no guard.

A loop at module level calls ``run(index, read, r)`` instead (:mod:`flamefuse.loops.scope`):
``read()`` gives the arguments, ``r`` is the outermost loop's range as Python evaluated it, and
``run`` returns what of ``r`` is left to run as written: all of it (the checks above said no),
nothing, or its last iteration, after writing the loop variables' final values into the
module's globals; it also says no where the code does not run with the module's globals as its
locals.
"""
from __future__ import annotations

import builtins
import math
import sys
import time
from collections import Counter

import numpy as np

from flamefuse.loops.site import GLOBAL, SITES, STATE, explain, summary  # noqa: F401  (STATE: index -> _State)

_F8 = np.dtype(np.float64)
_INTS = (int, np.int64)     # not np.int32, np.uint8...: their arithmetic wraps (NumPy's scalars), Python's does not
_LIMIT = 1 << 31
_EXTENT = 1 << 30
SHORT_S = 1e-4          # a compiled call this short (guard included) is compared with the loop as written
ADAPTIVE = True         # compare compiled calls with the loop as written (tests turn it off: no timing)
_BUILTINS = {"range": builtins.range, "abs": builtins.abs, "min": builtins.min, "max": builtins.max}


class _State:
    __slots__ = ("codes", "launchers", "compiled", "declined", "compiled_s", "written_s", "probe", "probed",
                 "started")

    def __init__(self):
        self.codes: dict = {}           # sig -> LoopCode or the reason it is refused (str)
        self.launchers: dict = {}       # sig -> launcher
        self.compiled = 0
        self.declined = Counter()       # reason -> calls run as written
        self.compiled_s = math.inf      # the fastest compiled call (its copies included)
        self.written_s = math.inf       # the fastest call run as written and timed (a probe)
        self.probe = ""                 # why the next call runs as written, timed ("": it does not)
        self.probed = False             # a call was timed as written (once per process)
        self.started = 0.0              # when the timed call as written started


def reset() -> None:
    STATE.clear()


def install(namespace: dict) -> None:
    """Give the script's globals the guard (when the running script has a compilable site)."""
    if any(s.reason is None for s in SITES):
        namespace[GLOBAL] = run


def _decline(index: int, reason: str) -> bool:
    state = STATE.get(index)
    if state is None:
        state = STATE.setdefault(index, _State())     # (threads: one state per site)
    state.declined[reason] += 1
    return False


def _np_functions(module) -> tuple:
    return tuple(id(getattr(module, name, None)) for name in ("sqrt", "abs", "dot", "outer"))


_NP_FUNCTIONS: dict = {id(np): _np_functions(np)}     # module id -> its functions as first seen


RECORDED_FROM: list = []     # [n] once flamefuse.lazy.configure(eager_below=n) ran (it sets it)


def _recorded_from() -> int:
    """The size from which flamefuse.lazy records an operation rather than running it at once
    (its ``eager_below``: ``configure(eager_below=)``, else ``FLAMEFUSE_EAGER_BELOW``): a
    fixed-slice site (``Site.fixed``) on lazy arrays this large is left to runtime fusion. Read
    from the switch, not from flamefuse.lazy: compiled loops sit below the front end."""
    from flamefuse import switches
    return RECORDED_FROM[0] if RECORDED_FROM else switches.integer("FLAMEFUSE_EAGER_BELOW")


def _is_numpy(x) -> bool:
    return x is np or x is sys.modules.get("flamefuse.lazy")


def run(index: int, args, outer=None):
    """Run site ``index``'s compiled loop on ``args`` if it may (see the module doc); a negative
    ``index`` ``-1 - k`` marks the end of site ``k``'s loop run as written. Never raises: a
    failure of this machinery runs the loop as written (its writes, if any, undone first).

    A module-level site passes ``args`` as a function that reads them and ``outer``, the range
    of its outermost loop as evaluated, and gets back what of it is left to run as written
    (:mod:`flamefuse.loops.scope`): ``outer`` itself, its last iteration or nothing."""
    if outer is not None:
        try:
            frame = sys._getframe(1)
            namespace = frame.f_globals if frame.f_locals is frame.f_globals else None
        except Exception:      # noqa: BLE001 -- (no frames: as written)
            namespace = None
        return _module_run(index, args, outer, namespace)
    try:
        return _run(index, args)
    except Exception as err:       # noqa: BLE001 -- flamefuse's failure, never the script's
        return _decline(index if index >= 0 else -1 - index, f"the guard failed ({type(err).__name__}: {err})")


def _module_run(index: int, read, r, namespace):
    """``run`` for a module-level site: ``read()`` gives its arguments (NameError: one has no
    value), ``r`` is its outermost range, ``namespace`` the module's globals (None where the
    code runs with locals that are not its globals: an ``exec`` with two mappings). Whatever
    the compiled call may change is decided before it (the loop variables' final values), so
    after it nothing can fail; a failure before it runs the loop as written."""
    from flamefuse.loops import scope
    try:
        if namespace is None:
            _decline(index, "its names are not the module's globals (run with other locals)")
            return r
        try:
            args = read()
        except NameError:
            args = None
        if args is None:
            _decline(index, "a name it reads had no value")
            return r
        site = SITES[index]
        plan = scope.plan(site, args, r)
        if type(plan) is str:
            _decline(index, plan)
            return r
        part, finals, values = plan
        if not _run(index, values, scope.variant(site)):
            return r
    except Exception as err:       # noqa: BLE001 -- flamefuse's failure, never the script's
        _decline(index, f"the guard failed ({type(err).__name__}: {err})")
        return r
    namespace.update(finals)
    return r[len(part):]


def _run(index: int, args, site=None) -> bool:
    if index < 0:
        state = STATE.get(-1 - index)
        if state is not None and state.started:
            state.written_s = min(state.written_s, time.perf_counter() - state.started)
            state.started = 0.0
        return True
    t_in = time.perf_counter()
    if args is None:
        return _decline(index, "a name it reads had no value")
    site = SITES[index] if site is None else site
    state = STATE.get(index)
    if state is not None and state.written_s < math.inf:
        if state.written_s < state.compiled_s:
            return _decline(index, f"measured faster as written ({state.written_s:.2e} s against "
                                   f"{state.compiled_s:.2e} s compiled, its copies included)")
    elif state is not None and state.probe:
        why, state.probe, state.probed = state.probe, "", True
        state.started = time.perf_counter()
        return _decline(index, f"timed as written once ({why})")
    nparams = len(site.params)
    for name, f in zip(site.funcs, args[nparams:]):
        if name in _BUILTINS:
            if f is not _BUILTINS[name]:
                return _decline(index, f"{name} is not the built-in")
            continue
        if not _is_numpy(f):
            return _decline(index, f"{name} is not NumPy")
        funcs = _np_functions(f)
        if funcs != _NP_FUNCTIONS.setdefault(id(f), funcs):
            return _decline(index, f"{name}.sqrt, {name}.abs, {name}.dot or {name}.outer is not NumPy's own")
    from flamefuse.runtime import fpflags
    if not fpflags.AVAILABLE:
        return _decline(index, "no floating-point flags on this platform (NumPy's warnings could not be seen)")
    values, sig, arrays = [], [], []
    for name, x in zip(site.params, args[:nparams]):
        t = type(x)
        if t.__name__ == "LazyArray" and t.__module__ == "flamefuse.lazy.array":
            if site.fixed and x.size >= _recorded_from():
                return _decline(index, "the same whole-array statements every iteration on large arrays "
                                       "(left to runtime fusion: one plan, reused, in parallel)")
            x = x.__array__()
            if x.ndim == 0:
                x = x[()]
            t = type(x)
        if t is np.ndarray:
            if x.dtype != _F8 or not x.dtype.isnative or x.ndim == 0:
                return _decline(index, f"{name} is not a float64 array")
            fl = x.flags
            if not (fl.c_contiguous and fl.aligned):
                return _decline(index, f"{name} is not C-contiguous")
            if name in site.written and not fl.writeable:
                return _decline(index, f"{name} is read-only")
            if any(d >= _EXTENT for d in x.shape):
                return _decline(index, f"{name} has an extent of 2**30 or more")
            sig.append(f"a{x.ndim}")
            arrays.append((name, x))
        elif t is float or t is np.float64:
            sig.append("f")
            x = float(x)
        elif t in _INTS:
            x = int(x)
            if not -_LIMIT < x < _LIMIT:
                return _decline(index, f"{name} is an int of 2**31 or more")
            sig.append("i")
        else:
            return _decline(index, f"{name} is a {t.__name__}")
        values.append(x)
    for k, (name, a) in enumerate(arrays):
        for other, b in arrays[k + 1:]:
            if a is not b and (name in site.written or other in site.written) and np.may_share_memory(a, b):
                return _decline(index, f"{name} and {other} may share memory")
    sig = tuple(sig)
    if state is None:
        state = STATE.setdefault(index, _State())     # (threads: one state per site)
    launch = warm = state.launchers.get(sig)
    if launch is None:
        launch = _launcher(index, site, state, sig)
        if type(launch) is str:
            return _decline(index, launch)
    from flamefuse.loops.blas import ddot_address, dgemv_address
    t0 = time.perf_counter()
    written = {id(a): a for name, a in arrays if name in site.written}
    saved = [(a, a.copy()) for a in written.values()]
    extent = max((max(a.shape) for _, a in arrays), default=1)
    size = max((a.size for _, a in arrays), default=1)
    t1 = time.perf_counter()
    fpflags.clear()
    try:
        status = launch(ddot_address() or 0, dgemv_address() or 0, extent, size, *values)
    except Exception:      # noqa: BLE001 -- (ctypes): restored, run as written
        status = 0
    bits = fpflags.raised()
    t2 = time.perf_counter()
    if status != 1 or bits & 11 or (bits & 4 and np.geterr()["under"] != "ignore"):
        for a, copy in saved:
            np.copyto(a, copy)
        return _decline(index, "the compiled loop raised (run as written for Python's and NumPy's own error)"
                        if status != 1 else "a floating-point flag was raised (run as written for NumPy's warning)")
    state.compiled += 1
    if warm is not None and ADAPTIVE:    # (a first call's imports and load are not the loop's cost)
        state.compiled_s = min(state.compiled_s, t2 - t_in)
        if not state.probed:    # time the loop as written once where the guard may cost more
            if t1 - t0 > 0.5 * (t2 - t_in):
                state.probe = "copying the written arrays took most of a compiled call"
            elif t2 - t_in < SHORT_S:
                state.probe = f"a compiled call took under {SHORT_S:.0e} s: the guard's own cost may exceed the loop"
    return True


def _launcher(index, site, state, sig):
    """The launcher for ``sig``, or the reason there is none (a str)."""
    code = state.codes.get(sig)
    if code is None:
        from flamefuse.loops.kept import rendered       # (kept per script: no AST pass when warm)
        text, refused = rendered(site, sig)
        if text is None:
            code = f"not compiled for these types: {refused}"
        else:
            from flamefuse.loops.code import of_loop        # (with the native loader)
            code = of_loop(text)
        state.codes[sig] = code
    if type(code) is str:
        return code
    from flamefuse.runtime import compiler, native
    if not native.enabled():
        return "FLAMEFUSE_NATIVE=0 (compiled loops are native libraries)"
    if compiler.background():
        if not native.built(code.source, sig) and not code.keep():
            return "no cache folder to compile it in"
        fn = compiler.library(code, sig)
        if fn is None:
            return "compiling in the background (the next run uses it)"
    else:
        fn = native.find(code.source, sig)
        if fn is None:
            folder = native._folder()
            if folder is None:
                return "no cache folder for its native library"
            if not native.cannot_build(code.source, sig):
                native.build_one(code, sig, folder)
                native.forget(code.source, sig)
                fn = native.find(code.source, sig)
    if fn is None or fn is compiler.INLINE:
        state.codes[sig] = "its native library cannot be built"
        return state.codes[sig]
    state.launchers[sig] = fn
    return fn
