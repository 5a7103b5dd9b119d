"""The layers of docs/architecture.md: every import between flamefuse's parts runs down (or
sideways), never up (#31 item 1 moved the commands out of the stages into flamefuse/cli/).
Imports inside functions count: they are the same dependency, deferred."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "flamefuse"

# the layers of docs/architecture.md, bottom first; a part is a sub-package or a top-level module
LAYERS = {
    # 0 foundations: a part that imports nothing from flamefuse is here whether listed or not
    "errors": 0, "files": 0, "trust": 0, "limits": 0, "solver": 0, "timing": 0, "machine": 0,
    "unionfind": 0, "numba_cache": 0, "cache_store": 0, "kernels": 0, "shipped": 0,
    "switches": 0, "identity": 0, "sigcodes": 0, "values": 0,
    "jit": 1, "cache": 1, "store": 1,                        # services: Numba, the cache store
    "pme": 2, "loopnest": 2, "cluster": 2,                   # the task model; run-time libraries
    "spec": 3, "runtime": 3,
    "search": 4, "loops": 4,                                 # loops: the script's loops, compiled
    "derive": 5,
    "present": 6, "codegen": 6,
    "pipeline": 7,                                           # synthesize(problem): search, derive, IR
    "synth": 7,                                              # where the two halves meet
    "lazy": 8,                                               # the NumPy front end
    "dask": 9,
    "cli": 10,                                               # the edge: commands
}
UP: set = set()        # imports that run up the layers: none since the commands moved to cli/


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _imports(name, path):
    """The flamefuse modules ``path`` imports (absolute or relative, at any depth)."""
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["flamefuse"] + (name.split(".") if name else [])
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - node.level + 1]
                targets = [".".join(base + ([node.module] if node.module else []))]
            elif node.module == "flamefuse":                     # from flamefuse import store
                targets = [f"flamefuse.{a.name}" for a in node.names]
            else:
                targets = [node.module or ""]
        else:
            continue
        for t in targets:
            if t.startswith("flamefuse.") and t.split(".")[1]:
                yield t.split(".", 1)[1]


def _part(module: str) -> str:
    return module.split(".")[0]


def test_every_part_has_a_layer():
    parts = {_part(m) for m, _ in _modules() if m}
    importing = {_part(m) for m, p in _modules() if m and any(True for _ in _imports(m, p))}
    assert sorted(p for p in parts & importing if p not in LAYERS) == [], \
        "a new part of flamefuse that imports others: give it a layer here and in docs/architecture.md"


def test_imports_run_down_the_layers():
    up = set()
    for name, path in _modules():
        if not name:
            continue
        me = _part(name)
        for target in _imports(name, path):
            other = _part(target)
            if other != me and LAYERS.get(other, 0) > LAYERS.get(me, 0):
                up.add((name if (name, other) in UP else f"{name} (new)", other))
    assert sorted(u for u in up if u[0].endswith("(new)")) == [], "an import runs up the layers"


def test_the_check_sees_an_upward_import(tmp_path):
    path = tmp_path / "x.py"
    path.write_text("def f():\n    from flamefuse.lazy import array\n    from ..cache import usable_cache_dir\n"
                    "    from flamefuse import synth\n")
    assert sorted(_imports("runtime.x", path)) == ["cache", "lazy", "synth"]
    assert LAYERS["lazy"] > LAYERS["runtime"] > LAYERS["cache"]
