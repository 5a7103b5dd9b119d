"""Run a source's functions as written and with its loops compiled (flamefuse.loops)."""
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
    rewrite.install(ns)
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
