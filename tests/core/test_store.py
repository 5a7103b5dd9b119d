"""One cache store for every kind (issue 28 item 5): one entry format, one identity stamp, one
trust check, atomic writes, a use noted on each read, one table of kinds.

Each kind's own reader is driven through its module (plans, the scripts' kernel lists,
adaptive fusion's decisions, derive records, tuned block sizes, generated modules, native
libraries' sidecars): an entry written by another version or machine, or in the old
per-kind formats, is a miss (never an error) and is overwritten in place.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from flamefuse import cache_store, identity, store
from flamefuse.cli import main

REAL_REPLACE = os.replace


@pytest.fixture
def root(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(folder))
    for name in ("FLAMEFUSE_CACHE", "FLAMEFUSE_PLAN_CACHE", "FLAMEFUSE_DERIVE_CACHE"):
        monkeypatch.setenv(name, "1")
    store._usable.cache_clear()
    store.stamp.cache_clear()
    yield folder
    store._usable.cache_clear()
    store.stamp.cache_clear()


def another(monkeypatch, *, version=None, machine=None):
    """Pretend to be another flamefuse (or Python, NumPy, Numba) or another machine."""
    if version:
        monkeypatch.setattr(identity, "versions", lambda: version)
    if machine:
        monkeypatch.setattr(identity, "machine", lambda: machine)
    store.stamp.cache_clear()


@pytest.mark.parametrize("kind", cache_store.KINDS)
def test_every_kind_round_trips_and_another_version_is_a_miss(root, monkeypatch, kind):
    assert store.put(kind, "entry_1", b"payload \x00\xff", ".bin") == root / kind / "entry_1.bin"
    assert store.get(kind, "entry_1", ".bin") == b"payload \x00\xff"
    assert store.get(kind, "entry_2", ".bin") is None
    another(monkeypatch, version="flamefuse 0.0.0; python cpython 3.0.0")
    assert store.get(kind, "entry_1", ".bin") is None          # a miss, not an error
    store.put(kind, "entry_1", b"new", ".bin")                   # overwritten in place
    assert store.get(kind, "entry_1", ".bin") == b"new"
    assert [p.name for p in (root / kind).iterdir()] == ["entry_1.bin"]


@pytest.mark.parametrize("kind", cache_store.KINDS)
def test_a_stale_or_foreign_header_is_a_miss(root, kind):
    file = store.put(kind, "k", b"data", ".bin")
    good = file.read_bytes()
    for bad in (b"data",                                         # no header: the old formats
                good.replace(store.stamp(kind).encode(), b"0" * 24),
                good.replace(f" {kind} ".encode(), b" other "),
                b"", good[:10]):
        file.write_bytes(bad)
        assert store.get(kind, "k", ".bin") is None
    file.write_bytes(good)
    assert store.get(kind, "k", ".bin") == b"data"
    assert store.get(kind, "other key", ".bin") is None          # same file name, other key
    long_key = "x" * 500
    store.put(kind, long_key, b"long", ".bin")
    assert store.get(kind, long_key, ".bin") == b"long" and (root / kind / f"{store.name(long_key)}.bin").exists()


def test_machine_stamped_kinds_belong_to_their_machine(root, monkeypatch):
    for kind in cache_store.KINDS:
        store.put(kind, "k", b"x", ".bin")
    another(monkeypatch, machine="another CPU (riscv64, flags 0)")
    kept = {kind for kind in cache_store.KINDS if store.get(kind, "k", ".bin") is not None}
    assert kept == {k.name for k in cache_store.TABLE if not k.machine}
    assert {"native", "adapt"} <= set(cache_store.KINDS) - kept


def test_the_stamp_holds_versions_and_the_kinds_own_source(root, monkeypatch):
    text = identity.versions()
    for part in ("flamefuse ", "python ", "numpy ", "numba ", "llvmlite "):
        assert part in text
    stamps = {kind: store.stamp(kind) for kind in cache_store.KINDS}
    monkeypatch.setattr(identity, "source_digest", lambda parts: "changed source")
    store.stamp.cache_clear()
    changed = {kind for kind in cache_store.KINDS if store.stamp(kind) != stamps[kind]}
    assert changed == {k.name for k in cache_store.TABLE if k.sources}
    assert {"plans", "derive", "synth", "adapt"} <= changed


def test_a_read_is_a_use_and_keeps_the_modification_time(root):
    file = store.put("kernels", "ffk_x", "x = 1\n", ".py")
    os.utime(file, (1_000_000_000, 1_000_000_000))
    assert store.get("kernels", "ffk_x", ".py") == b"x = 1\n"
    st = os.stat(file)
    assert st.st_mtime == 1_000_000_000 and st.st_atime > 1_600_000_000


def test_nothing_half_written(root, monkeypatch):
    store.put("plans", "p", b"old", ".plan")

    def broken(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", broken)
    with pytest.warns(RuntimeWarning, match="cannot write"):
        assert store.put("plans", "p", b"new" * 1000, ".plan") is None
    monkeypatch.setattr(os, "replace", REAL_REPLACE)     # (undo() would drop root's settings too)
    assert store.get("plans", "p", ".plan") == b"old"
    assert [p.name for p in (root / "plans").iterdir()] == ["p.plan"]     # no temporary file left


def test_an_entry_others_can_write_is_refused(root):
    file = store.put("scripts", "s", b"[]", ".json")
    os.chmod(file, 0o666)
    with pytest.warns(RuntimeWarning, match="refusing"):
        from flamefuse import trust
        trust._WARNED.clear()
        assert store.get_json("scripts", "s") is None
    os.chmod(file, 0o644)
    assert store.get_json("scripts", "s") == []


def test_switches_turn_kinds_off(root, monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_PLAN_CACHE", "0")
    assert store.folder("plans") is None and store.put("plans", "p", b"x", ".plan") is None
    assert store.folder("kernels") == root / "kernels"
    monkeypatch.setenv("FLAMEFUSE_CACHE", "0")
    assert all(store.folder(kind) is None for kind in cache_store.KINDS)


# -- each kind's module reads through the store ---------------------------------------------------

def test_plans_of_another_version_are_a_miss(root, monkeypatch):
    from flamefuse.runtime import plan_cache
    record = (("src",), ((0, ((0, 1, (3,)),)),), (), 1.5, (), ())
    plan_cache.store("program", "greedy", record)
    assert plan_cache.load("program", "greedy") == record
    another(monkeypatch, version="flamefuse 0.0.0")
    assert plan_cache.load("program", "greedy") is None


def test_script_kernel_lists_of_another_version_are_a_miss(root, monkeypatch, tmp_path):
    from flamefuse.runtime import preload
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    monkeypatch.setenv("FLAMEFUSE_PRELOAD", "1")
    monkeypatch.setattr(preload, "_SEEN", {"def kernel(a0):\n    pass\n": {("<f8:1w",)}})
    preload.save(script)
    assert preload.kernels(script) == [("def kernel(a0):\n    pass\n", ("<f8:1w",))]
    another(monkeypatch, version="flamefuse 0.0.0")
    assert preload.kernels(script) == []
    preload._file(script).write_text(json.dumps([["def kernel(a0):\n    pass\n", ["<f8:1w"]]]))    # old format
    assert preload.kernels(script) == []


def test_adapt_decisions_of_another_machine_are_a_miss(root, monkeypatch, tmp_path):
    from flamefuse.runtime import adapt
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    monkeypatch.setenv("FLAMEFUSE_ADAPT", "1")
    decisions = {"mode": "numpy", "numpy_sites": [], "fused_s": 1.0, "numpy_s": 0.5, "sites": {}}
    monkeypatch.setattr(adapt, "_PER_ELEMENT", {})
    monkeypatch.setattr(adapt, "_MEASURED", set())
    adapt.per_element("ew", "add", ("float64", "float64", "float64"), 4096)   # a cost measured now
    adapt.save(script, [], decisions)
    assert adapt.load(script, []) == decisions
    assert (root / "adapt" / "numpy-costs.json").exists()
    another(monkeypatch, machine="another CPU")
    assert adapt.load(script, []) is None


def test_derive_records_of_another_version_are_a_miss(root, monkeypatch, capsys):
    from flamefuse.cli import derive_record as record
    spec = Path(__file__).resolve().parents[2] / "specs" / "trinv.yaml"
    computed, compute = [], record.compute
    monkeypatch.setattr(record, "compute", lambda *a, **k: computed.append(1) or compute(*a, **k))
    outs = []
    for version in (None, None, "flamefuse 0.0.0", None):
        if version:
            another(monkeypatch, version=version)
        assert main(["derive", str(spec), "--json"]) == 0
        outs.append(capsys.readouterr().out)
    assert computed == [1, 1] and len(set(outs)) == 1    # derived, kept, derived again, kept
    assert len(list((root / "derive").iterdir())) == 1   # overwritten, not kept beside


def test_tuned_block_sizes_of_another_version_are_a_miss(root, monkeypatch):
    import numpy as np

    from flamefuse.codegen import tune
    calls = []

    def kernel(x, *, block_size):
        calls.append(block_size)
        return 0
    tune.block_size(kernel, "k", 40, lambda: [np.zeros(1)], reps=1)
    assert tune.cache_file() == root / "codegen" / "blocksize.json"
    calls.clear()
    tune.block_size(kernel, "k", 40, lambda: [np.zeros(1)], reps=1)
    assert calls == []                                    # cached
    another(monkeypatch, version="flamefuse 0.0.0")
    tune.block_size(kernel, "k", 40, lambda: [np.zeros(1)], reps=1)
    assert calls                                          # timed again


def test_a_native_sidecar_of_another_version_is_not_trusted(root, monkeypatch):
    from flamefuse.runtime import native
    folder = store.folder("native")
    lib = folder / "abc.so"
    lib.write_bytes(b"\x7fELF fake library")
    import hashlib
    note = f"{hashlib.sha256(lib.read_bytes()).hexdigest()} {lib.stat().st_size}\n"
    store.write(native._sidecar(lib), "native", "abc", note)
    assert native._valid(lib)
    (folder / "abc.sha256").write_text(note)              # the old sidecar: no header
    assert not native._valid(lib)
    store.write(native._sidecar(lib), "native", "abc", note)
    another(monkeypatch, machine="another CPU")
    assert not native._valid(lib)


def test_a_stale_generated_module_is_rewritten_and_loaded(root, monkeypatch):
    pytest.importorskip("numba")
    import sys

    from flamefuse.cache import load_module
    source = "VALUE = 42\n"
    file = root / "loopnest" / "ff_store_test_mod.py"
    file.parent.mkdir(parents=True, mode=0o700)
    file.write_text("VALUE = 41\n")                       # the old format, another text
    monkeypatch.delitem(sys.modules, "ff_store_test_mod", raising=False)
    module, cached = load_module("loopnest", "ff_store_test_mod", source)
    assert module.VALUE == 42 and not cached
    assert store.payload(file) == source.encode() and file.read_bytes().startswith(store.MAGIC)
    del sys.modules["ff_store_test_mod"]
    module, cached = load_module("loopnest", "ff_store_test_mod", source)
    assert module.VALUE == 42 and cached
    del sys.modules["ff_store_test_mod"]
    another(monkeypatch, version="flamefuse 0.0.0")
    module, cached = load_module("loopnest", "ff_store_test_mod", source)
    assert module.VALUE == 42 and not cached             # another version's module: a miss
    del sys.modules["ff_store_test_mod"]


def test_the_cache_command_lists_every_kind(root, capsys):
    store.put("plans", "p", b"x" * 100, ".plan")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert list(lines) == list(cache_store.KINDS)
    assert " 1 files" in lines["plans"] and " 0 files" in lines["native"]
    assert all(k.holds in lines[k.name] for k in cache_store.TABLE)


def test_new_folders_are_private(root):
    folder = store.folder("derive")
    assert folder == root / "derive"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700 and stat.S_IMODE(os.stat(root).st_mode) == 0o700
