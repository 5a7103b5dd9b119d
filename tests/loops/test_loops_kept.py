"""flamefuse.loops.kept: a script's guarded code, its sites and its rendered loops kept per
script digest in the store; a warm compile reads them (no AST pass, no rewrite, no render) and
runs as the rewritten code does, with NumPy's results; a damaged or stale entry is a miss."""
import sys

import numpy as np
import pytest

from flamefuse import store
from flamefuse.digest import sha256
from flamefuse.loops import guard, kept
from flamefuse.loops import site as loop_site
from loops_helpers import same_bits

SOURCE = b"""
import numpy as np

def lower(A, n):
    for i in range(1, n):
        for j in range(i):
            A[i, j] = (A[i, j] - np.dot(A[i, :j], A[j, :j])) / A[j, j]
    return A

def sums(x, n):
    out = np.zeros(1)
    for i in range(n):
        out[0] += x[i] ** 3         # '**': refused
    return out
"""


def _run(code, n=30):
    ns = {"__name__": "kept_loops"}
    guard.install(ns)
    exec(code, ns)
    A = np.random.default_rng(3).random((n, n)) + n * np.eye(n)
    return ns["lower"](A.copy(), n), ns["sums"](np.arange(5.0), 5)


def _want(n=30):
    ns = {"__name__": "plain_loops"}
    exec(compile(SOURCE, "<plain>", "exec"), ns)
    A = np.random.default_rng(3).random((n, n)) + n * np.eye(n)
    return ns["lower"](A.copy(), n), ns["sums"](np.arange(5.0), 5)


def _refuse(monkeypatch, module):
    """Importing ``module`` from now on fails (a warm compile must not need it)."""
    monkeypatch.setitem(sys.modules, module, None)


def _sig(site, array):
    return tuple(array if p == "A" else "i" for p in site.params)


def test_a_warm_compile_reads_code_and_sites_and_runs_them(tmp_path, monkeypatch):
    name = str(tmp_path / "script.py")
    _run(kept.compile_script(SOURCE, name))              # cold: rewritten, rendered and kept
    cold_sites = [s.plain() for s in guard.SITES]
    assert [s.reason is None for s in guard.SITES] == [True, False]
    for module in ("flamefuse.loops.rewrite", "flamefuse.loops.extract", "flamefuse.loops.render"):
        _refuse(monkeypatch, module)
    code = kept.compile_script(SOURCE, name)             # warm: read, nothing parsed
    assert [s.plain() for s in guard.SITES] == cold_sites
    assert all(s.loop is None for s in guard.SITES)
    got, want = _run(code), _want()
    assert same_bits(got[0], want[0]) and same_bits(got[1], want[1])
    assert sum(s.compiled for s in guard.STATE.values()) == 1     # its loop ran compiled, from kept text


def test_a_kept_render_is_found_again_from_the_text_when_missing(tmp_path):
    name = str(tmp_path / "script.py")
    kept.compile_script(SOURCE, name)
    kept.compile_script(SOURCE, name)                    # warm: sites without their AST node
    site = guard.SITES[0]
    sig = _sig(site, "a2")
    path = store.path("loops", f"render {loop_site.SCRIPT[2]} 0 {' '.join(sig)}", ".loop")
    if path.exists():
        path.unlink()                                     # the rendered text not kept
    text, refused = kept.rendered(site, sig)
    assert refused is None and "def loop(" in text and site.loop is not None
    assert path.exists() and kept.rendered(site, sig) == (text, None)   # and now kept


def test_a_refusal_is_kept_too(tmp_path, monkeypatch):
    name = str(tmp_path / "script.py")
    kept.compile_script(SOURCE, name)
    sig = _sig(guard.SITES[0], "a1")                     # a 2-D subscript of a 1-D array
    first = kept.rendered(guard.SITES[0], sig)
    assert first[0] is None and first[1]
    _refuse(monkeypatch, "flamefuse.loops.render")
    assert kept.rendered(guard.SITES[0], sig) == first


def test_a_damaged_entry_is_a_miss(tmp_path):
    name = str(tmp_path / "script.py")
    key = f"code {name} {sha256(SOURCE).hexdigest()} {sys.flags.optimize}"
    store.put("loops", key, b"not marshal", ".code")
    code = kept.compile_script(SOURCE, name)
    got, want = _run(code), _want()
    assert same_bits(got[0], want[0]) and same_bits(got[1], want[1])


def test_another_text_or_file_name_is_another_entry(tmp_path):
    name = str(tmp_path / "script.py")
    kept.compile_script(SOURCE, name)
    other = SOURCE.replace(b"out[0] += x[i] ** 3", b"out[0] += x[i] * x[i]")
    kept.compile_script(other, name)
    assert [s.reason is None for s in guard.SITES] == [True, True]
    code = kept.compile_script(SOURCE, str(tmp_path / "elsewhere.py"))
    assert code.co_filename == str(tmp_path / "elsewhere.py")
    assert [s.reason is None for s in guard.SITES] == [True, False]


def test_a_syntax_error_is_raised_and_not_kept(tmp_path):
    name = str(tmp_path / "bad.py")
    for _ in range(2):
        with pytest.raises(SyntaxError):
            kept.compile_script(b"def f(:\n    for i in range(3): pass\n", name)
