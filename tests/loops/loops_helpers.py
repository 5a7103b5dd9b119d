"""Run a source's functions as written and with its loops compiled (flamefuse.loops)."""
import types
import warnings
from pathlib import Path

import numpy as np

from flamefuse.loops import guard, rewrite

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"


def corpus_source(name: str) -> str:
    return (CORPUS / f"{name}.py").read_text()


def plain(source: str, **extra) -> dict:
    ns = {"__name__": "plain_loops", **extra}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns


def compiled(source: str, filename: str = "<loops>", **extra) -> dict:
    code = rewrite.compile_script(source, filename)
    ns = {"__name__": "compiled_loops", **extra}
    guard.install(ns)
    exec(code, ns)
    return ns


def calls() -> tuple[int, int]:
    """(calls run compiled, calls run as written) so far, all sites."""
    return (sum(s.compiled for s in guard.STATE.values()),
            sum(sum(s.declined.values()) for s in guard.STATE.values()))


def declined() -> dict:
    out = {}
    for s in guard.STATE.values():
        for why, n in s.declined.items():
            out[why] = out.get(why, 0) + n
    return out


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _canon(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.nan, a).astype(a.dtype)     # NaN payloads aside
    return a.dtype.str, a.shape, a.tobytes()


def outcome(f, arrays, scalars=()):
    """What calling ``f(*arrays, *scalars)`` did: the arrays' bits after, the exception (type
    name, message) and the warnings (category name, message)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            f(*arrays, *scalars)
            err = None
        except Exception as e:      # noqa: BLE001
            err = (type(e).__name__, str(e))
    return [_canon(a) for a in arrays], err, [(x.category.__name__, str(x.message)) for x in w]


def check(source, make, scalars=(), name="f", **extra):
    """Run ``name`` as written and compiled on fresh inputs (``make()`` each time); assert the
    same outcome (bits, exception, warnings); return the outcome as written."""
    want = outcome(plain(source, **extra)[name], make(), scalars)
    got = outcome(compiled(source, **extra)[name], make(), scalars)
    assert got[1] == want[1], source
    assert got[2] == want[2], source
    assert got[0] == want[0], source
    return want


# -- scripts (loops at module level)

OURS = {"__builtins__", "_flamefuse_loops"}     # (names a script run by flamefuse has too)


def run_module(source: str, compiled: bool, name="__main__", **extra) -> dict:
    """Run ``source`` as a script (its names globals) as written or with its loops compiled; its globals."""
    ns = {"__name__": name, **{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in extra.items()}}
    if compiled:
        code = rewrite.compile_script(source, "<module loops>")
        guard.install(ns)
    else:
        code = compile(source, "<module loops>", "exec")
    exec(code, ns)
    return ns


def _value(v):
    if isinstance(v, np.ndarray):
        return ("array", _canon(v))
    if isinstance(v, (float, np.floating)):
        return (type(v), "nan" if v != v else np.float64(v).tobytes())     # (NaN payloads aside)
    if isinstance(v, (int, str, bool, np.integer, type(None))):
        return (type(v), repr(v))
    if isinstance(v, type):
        return ("class", v.__name__, [(k, _value(x)) for k, x in sorted(vars(v).items()) if not k.startswith("__")])
    if isinstance(v, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
        return (type(v), id(v))     # the same object
    return (type(v),)


def same_globals(a: dict, b: dict, skip=()) -> None:
    """Assert two scripts' globals are the same names with the same values and types (arrays
    bitwise, floats by their bits), except ``skip``."""
    keys = set(a) - OURS - set(skip)
    assert keys == set(b) - OURS - set(skip), (keys ^ (set(b) - OURS - set(skip)))
    for k in sorted(keys):
        assert _value(a[k]) == _value(b[k]), (k, a[k], b[k])
