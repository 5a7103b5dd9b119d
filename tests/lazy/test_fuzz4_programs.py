"""The fourth camp's fuzz programs (tests/data/fuzz4/f01..f12, small arrays) print NumPy's lines
under flamefuse.lazy.

Each program probes one corner written the way NumPy users write it (NEP 50 promotion with
Python scalars, integer overflow, in-place updates through aliasing views, boolean masks with
broadcasting, ``np.errstate``, ``out=``, views' ``base``/``flags``, float16/complex64, 0-d and
empty arrays, negative strides, ``np.linalg`` errors) and prints one line per probe: the
value's kind, dtype, shape and a digest of its bytes (so values are compared bit for bit), or
the error's type and message, and the warnings it gave. Here each runs in this process with its
``import numpy`` answered by flamefuse.lazy (``flamefuse fuse``'s import hook; kernels
interpreted), every operation recorded and at flamefuse fuse's default ``eager_below``, and its
lines must be NumPy's, except :data:`KNOWN`. The larger programs f13..f20 run through
``flamefuse fuse`` itself (cold, warm, ``--no-adapt``): ``tests/data/fuzz4/run.sh``.
"""
import contextlib
import io
import warnings
from pathlib import Path

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.cli.fuse import _importer

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "tests" / "data" / "fuzz4").glob("f*.py"))[:12]
ROUNDING = "a fused kernel rounds otherwise (a selection's sum; a synthesized inverse)"
TYPE = "a recorded reduction to one value is a 0-d lazy array (docs/guide.md, 6: the type)"
KNOWN = {"f04_masks": {"m[None] bcast": ROUNDING}, "f12_linalg_errors": {"inv f32": ROUNDING},
         "f09_zero_d": {"scalar type": TYPE}}


def _lines(path: Path, module) -> list[str]:
    code = compile(path.read_text(), str(path), "exec")
    namespace = {"__name__": "__main__", "__file__": str(path)}
    if module is not numpy:
        import builtins
        namespace["__builtins__"] = dict(builtins.__dict__, __import__=_importer(module))
    out = io.StringIO()
    with warnings.catch_warnings(), numpy.errstate(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        exec(code, namespace)
        lazy.flush()
    return out.getvalue().splitlines()


@pytest.mark.parametrize("eager_below", [0, 1 << 15], ids=["recorded", "default"])
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_numpys_lines(monkeypatch, path, eager_below):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(partitioner="greedy", eager_below=eager_below)
    try:
        want = _lines(path, numpy)
        got = _lines(path, lazy)
    finally:
        lazy.configure(eager_below=1 << 15)
    known = KNOWN.get(path.stem, {}) if eager_below == 0 else {}
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if any(w.startswith(k + " ") for k in known):
            continue
        assert g == w
