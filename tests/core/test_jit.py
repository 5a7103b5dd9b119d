"""The one way into Numba (flamefuse.jit): what goes through it, and that it compiles, heals and defers."""
import ast
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from flamefuse import jit
from flamefuse.codegen.prelude import PARTS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "flamefuse"
DOORS = {"jit.py", "numba_cache.py"}
# modules whose text is copied into every generated module (flamefuse.codegen.prelude.PARTS):
# generated modules import nothing from flamefuse, so these reach Numba themselves
COPIED = {PACKAGE / "codegen" / f"{m.rsplit('.', 1)[1]}.py" for m in PARTS}
COMPILERS = {"njit", "jit", "generated_jit", "vectorize", "guvectorize", "stencil"}


def _standalone(tree) -> bool:
    """A module that imports nothing from flamefuse: its text is copied into generated modules
    (numba_cache), so it must reach Numba itself."""
    return not any(isinstance(n, ast.ImportFrom) and (n.module or "").startswith("flamefuse") or
                   isinstance(n, ast.Import) and any(a.name.startswith("flamefuse") for a in n.names)
                   for n in ast.walk(tree))


def _ways_in(tree) -> list[str]:
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(a.name == "numba" for a in n.names):
            found.append(f"line {n.lineno}: import numba")
        if isinstance(n, ast.ImportFrom) and n.module == "numba" and COMPILERS & {a.name for a in n.names}:
            found.append(f"line {n.lineno}: from numba import {', '.join(a.name for a in n.names)}")
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("cached_njit", "heal"):
                found.append(f"line {n.lineno}: {name}(...)")
    return found


def test_flamefuse_reaches_numba_only_through_jit():
    """No module imports Numba or compiles a function but through flamefuse.jit (generated text,
    which is Numba's input, and Numba's types and cfunc for the native backend, are not ways in)."""
    bad = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in DOORS and path.parent == PACKAGE or path in COPIED:
            continue
        tree = ast.parse(path.read_text(), str(path))
        found = _ways_in(tree)
        if found and not _standalone(tree):
            bad[str(path.relative_to(ROOT))] = found
    assert bad == {}


def test_the_scan_sees_each_way_in():
    for text in ("import numba\n", "from numba import njit, prange\n", "cached_njit(f)\n",
                 "from flamefuse.numba_cache import heal\nheal(d)\n"):
        assert _ways_in(ast.parse(text)), text
    assert not _ways_in(ast.parse("from numba import types, from_dtype\ns = 'import numba'\n"))


def test_njit_heals_its_disk_cache_and_computes(tmp_path):
    (tmp_path / "jit_probe_mod.py").write_text("def f(a):\n    return a.sum() * 2.0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import jit_probe_mod
        fast = jit.njit(jit_probe_mod.f)
        assert fast(np.arange(4.0)) == 12.0
        assert fast._cache._flamefuse_healed
        plain = jit.njit(jit_probe_mod.f, cache=False)
        assert plain(np.arange(4.0)) == 12.0 and not getattr(plain._cache, "_flamefuse_healed", False)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("jit_probe_mod", None)


def test_generated_modules_are_healed_when_loaded(tmp_path, monkeypatch):
    from flamefuse.cache import load_module
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    source = "from numba import njit\n\n\n@njit(cache=True)\ndef kernel(a):\n    return a.max()\n"
    module, _ = load_module("kernels", "ff_test_jit_heal_" + os.urandom(4).hex(), source)
    assert module.kernel(np.array([1.0, 5.0, 2.0])) == 5.0
    assert module.kernel._cache._flamefuse_healed


def test_later_imports_numba_at_the_first_call_only():
    # the `later` function itself (fill.fill_upper takes NumPy's form where Numba is not imported)
    code = ("import sys, numpy as np\nfrom flamefuse.synth import fill\n"
            "print('numba' in sys.modules)\n"
            "a = np.arange(9.0).reshape(3, 3)\nfill._fill_upper(a, True)\n"
            "print('numba' in sys.modules, bool((a == a.T).all()), a[0, 2])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.split()
    assert out == ["False", "True", "True", "6.0"]


def test_runtime_threads_choose_workqueue_unless_the_user_chose(monkeypatch):
    nb = jit.numba()
    monkeypatch.delenv("NUMBA_THREADING_LAYER", raising=False)
    monkeypatch.setattr(nb.config, "THREADING_LAYER", "default")
    monkeypatch.setattr(jit, "_THREADS_CHOSEN", [])
    jit.runtime_threads()
    assert nb.config.THREADING_LAYER == "workqueue"
    monkeypatch.setenv("NUMBA_THREADING_LAYER", "omp")
    monkeypatch.setattr(nb.config, "THREADING_LAYER", "omp")
    monkeypatch.setattr(jit, "_THREADS_CHOSEN", [])
    jit.runtime_threads()
    assert nb.config.THREADING_LAYER == "omp"
