"""The generated module text: deterministic, committed, self-contained, and explained."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flamefuse.codegen import emit_module, write_module
from flamefuse.errors import FlameError
from flamefuse.pipeline import regenerate_all, synthesize
from flamefuse.spec import load

ROOT = Path(__file__).resolve().parents[2]


def test_regenerating_gives_the_committed_files(tmp_path):
    written = regenerate_all(ROOT / "specs", tmp_path)
    committed = sorted(p.name for p in (ROOT / "generated").glob("*.py"))
    assert sorted(p.name for p in written) == committed
    for p in written:
        assert p.read_text() == (ROOT / "generated" / p.name).read_text(), p.name


@pytest.mark.parametrize("path", sorted((ROOT / "generated").glob("*.py")), ids=lambda p: p.stem)
def test_imports_only_numpy_numba_scipy_and_the_standard_library(path):
    tree = ast.parse(path.read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots.add(node.module.split(".")[0])
    assert roots <= {"numpy", "numba", "scipy", "gc", "sys", "zlib", "types", "warnings", "ctypes", "glob", "os"}
    assert "scipy.linalg.cython_{lib}" in path.read_text() and "get_cython_function_address" in path.read_text()


def test_docstring_holds_invariant_and_body():
    text = (ROOT / "generated" / "spd_inverse.py").read_text()
    tree = ast.parse(text)
    kernel = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_k_spd_inverse_v1")
    doc = ast.get_docstring(kernel)
    assert "chol: invariant {op A_TL~ = chol(A_TL)" in doc
    assert "A11 := chol(A11)" in doc and "A11 := A11^T A11" in doc
    assert [d.id for d in kernel.decorator_list if isinstance(d, ast.Name)] == ["_jit"]   # numba.njit(cache=True)


def test_not_derived_variants_are_listed():
    problem = load(ROOT / "specs" / "lu.yaml")
    text = emit_module(synthesize(problem))
    assert "'lu_v1': " in text and "partial pivoting" in text
    assert "def lu_v1(" not in text and "def lu_v3(" in text


@pytest.mark.parametrize("spec,why", [("chol_backsolve", "no fused invariant")])
def test_nothing_to_emit_is_an_error(spec, why, tmp_path):
    problem = load(ROOT / "specs" / f"{spec}.yaml")
    with pytest.raises(FlameError, match=why):
        write_module(synthesize(problem), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_write_is_atomic_and_named_after_the_spec(tmp_path):
    problem = load(ROOT / "specs" / "cholesky.yaml")
    path = write_module(synthesize(problem), tmp_path)
    assert path == tmp_path / "cholesky.py"
    assert [p.name for p in tmp_path.iterdir()] == ["cholesky.py"]
    assert path.read_text() == emit_module(synthesize(problem))


def test_cached_module_imports_under_either_name(tmp_path):
    """A Numba cache written under one import name must not break the other (file stem vs package)."""
    import shutil
    import subprocess
    import sys

    pkg = tmp_path / "generated"
    pkg.mkdir()
    shutil.copy(ROOT / "generated" / "spd_inverse.py", pkg)
    run = ("import numpy as np; A = np.asfortranarray(np.diag([4.0, 2.0, 1.0])); "
           "info = m.DEFAULT(A, block_size=2); assert info == 0, info; "
           "assert np.allclose(np.tril(A), np.diag([0.25, 0.5, 1.0])), A")
    stem = f"import sys; sys.path.insert(0, {str(pkg)!r}); import spd_inverse as m; {run}"
    package = f"import generated.spd_inverse as m; {run}"
    for code in (stem, package, stem, package):
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]


LOADERS = {
    # a plug-in loader that runs the file without registering it in sys.modules
    "plugin": "import importlib.util\n"
              "spec = importlib.util.spec_from_file_location('plugin', PATH)\n"
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n",
    # the recipe in Python's docs: registered before it runs
    "registered": "import importlib.util, sys\n"
                  "spec = importlib.util.spec_from_file_location('plugin', PATH)\n"
                  "m = importlib.util.module_from_spec(spec); sys.modules['plugin'] = m\n"
                  "spec.loader.exec_module(m)\n",
    # a name that already belongs to another module
    "taken_name": "import importlib.util, json\n"
                  "spec = importlib.util.spec_from_file_location('json', PATH)\n"
                  "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                  "import sys; assert sys.modules['json'] is json\n",
    # a copy in an unrelated folder, imported by its stem
    "copied": "import sys, os; sys.path.insert(0, os.path.dirname(PATH)); import spd_inverse as m\n",
}


@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_generated_module_loads_any_way_cold_and_warm(loader, tmp_path):
    """However an application loads a generated file, the first run and every later one work."""
    import shutil
    import subprocess
    import sys

    folder = tmp_path / "somewhere_else"
    folder.mkdir()
    path = folder / "spd_inverse.py"
    shutil.copy(ROOT / "generated" / "spd_inverse.py", path)
    code = (f"PATH = {str(path)!r}\n" + LOADERS[loader] +
            "import numpy as np\n"
            "A = np.asfortranarray(np.diag([4.0, 2.0, 1.0])); info = m.DEFAULT(A, block_size=2)\n"
            "assert info == 0 and np.allclose(np.tril(A), np.diag([0.25, 0.5, 1.0])), (info, A)\n"
            "print('hits', sum(m._k_spd_inverse_v1.stats.cache_hits.values()))\n")
    hits = []
    for run in ("cold", "warm", "warm again"):
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, f"{loader}, {run} run:\n{done.stderr[-2000:]}"
        hits.append(int(done.stdout.split()[-1]))
    assert hits[0] == 0 and hits[1] > 0 and hits[2] > 0, hits   # the warm runs read Numba's disk cache


def test_default_is_the_measured_fastest_when_recorded(monkeypatch):
    from flamefuse.codegen import variants
    problem = load(ROOT / "specs" / "trinv.yaml")
    synthesis = synthesize(problem)
    monkeypatch.delitem(variants.FASTEST, "trinv", raising=False)
    plain = emit_module(synthesis)
    assert "DEFAULT is trinv_v5: the variant with the most past tasks" in plain
    monkeypatch.setitem(variants.FASTEST, "trinv", ("trinv_v3", "fastest for n >= 1024, a test"))
    text = emit_module(synthesis)
    assert "DEFAULT = trinv_v3" in text and "measured fastest by `flamefuse bench variants trinv`" in text
    monkeypatch.setitem(variants.FASTEST, "trinv", ("trinv_v9", "a variant that does not exist"))
    assert "DEFAULT = trinv_v5" in emit_module(synthesis)
