"""Real modules copied into one text (flamefuse.codegen.embed), and the prelude built that way."""
from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from flamefuse.codegen.embed import bundle
from flamefuse.codegen.prelude import PARTS, prelude

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def package(tmp_path, monkeypatch):
    """Write the modules ``{name: source}`` of a package ``pk`` and return a bundler for it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "pk" or m.startswith("pk.")]:
        monkeypatch.delitem(sys.modules, name)      # another test's package of that name
    (tmp_path / "pk").mkdir()
    (tmp_path / "pk" / "__init__.py").write_text("")

    def make(**modules):
        for name, source in modules.items():
            (tmp_path / "pk" / f"{name}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        return lambda *names: bundle([f"pk.{n}" for n in names], ours="pk")
    return make


BASE = '''
    """The docstring: not copied."""
    import os
    import json

    _COUNT = 3   # kept with its comment


    def used(x):
        return helper(x) + _COUNT


    def helper(x):
        return len(os.sep) * x


    def unused():
        return json.dumps(_OTHER)


    _OTHER = [k for k in range(2)]
'''


def test_only_what_the_imported_names_need_is_copied(package):
    make = package(base=BASE, top='''
        """Top."""
        import os

        from pk.base import used


        def main():
            return used(2) * len(os.sep)
    ''')
    text = make("top")
    defined = {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    assert defined == {"used", "helper", "main"}
    assert "_COUNT = 3   # kept with its comment" in text and "_OTHER" not in text and "json" not in text
    assert "docstring" not in text and "import used" not in text and text.count("import os") == 1
    assert "# ---- copied from pk.base (used and what it uses)" in text
    assert text.index("def used") < text.index("def main")        # what is imported comes first
    namespace = {}
    exec(compile(text, "bundle", "exec"), namespace)
    assert namespace["main"]() == 5                                # as the modules compute it
    assert make("top") == text                                     # deterministic


def test_a_whole_module_keeps_every_statement(package):
    make = package(base=BASE)
    text = make("base")
    assert "def unused" in text and "_OTHER = [k for k in range(2)]" in text
    assert text.startswith("import json\nimport os\n")             # imports gathered and sorted


@pytest.mark.parametrize("source,why", [
    ("from pk.base import used as other\n", "renamed imports"),
    ("from pk.base import nothing_there\n", "does not define"),
    ("import pk.base\n", "cannot be copied"),
    ("def f():\n    from pk.base import used\n    return used\n", "cannot be copied"),
    ("from .base import used\n", "relative import"),
    ("from pk.base import used\n\n\ndef helper():\n    return 1\n", "defined by both"),
    ("from pk.back import b\n\n\ndef f():\n    return b\n", "import each other"),
])
def test_what_a_copy_would_change_is_refused(package, source, why):
    make = package(base=BASE, top=source, back="from pk.top import f\n\n\ndef b():\n    return f\n")
    with pytest.raises(ValueError, match=why):
        make("top")


def test_the_prelude_is_the_source_of_the_real_modules():
    text = prelude()
    for module in PARTS + ("flamefuse.numba_cache", "flamefuse.trust"):
        assert f"# ---- copied from {module}" in text
    src = (ROOT / "flamefuse" / "codegen" / "numba_blas.py").read_text()
    trsm = src[src.index("@_jit\ndef _trsm("):]
    assert trsm[:trsm.index("\n\n\n")] in text
    names = {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    assert {"folder_problem", "file_problem", "cached_njit", "heal", "_untrusted", "_trsm", "_check",
            "_scipy_call"} <= names
    assert "open_trusted" not in names and "refuse" not in names   # not used by the copied code


@pytest.mark.parametrize("path", sorted((ROOT / "generated").glob("*.py")), ids=lambda p: p.stem)
def test_every_generated_module_holds_the_prelude(path):
    assert prelude().strip("\n") in path.read_text()
