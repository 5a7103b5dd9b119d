"""The ``FLAMEFUSE_*`` switches: one table, read in one place, documented in one table (issue 31
item 5), and read when they matter (tests set them per test)."""
from __future__ import annotations

import re
from pathlib import Path

from flamefuse import switches

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "flamefuse"


def test_every_switch_named_in_the_code_is_in_the_table():
    named = set()
    for path in PACKAGE.rglob("*.py"):
        named |= set(re.findall(r"FLAMEFUSE_[A-Z_]+[A-Z]", path.read_text()))
    assert named <= set(switches.BY_NAME), named - set(switches.BY_NAME)


def test_only_the_switches_module_reads_them():
    readers = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "switches.py":
            continue
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if "FLAMEFUSE_" in line and re.search(r"environ|getenv", line):
                readers.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert not readers, readers


def test_the_guide_has_the_table():
    assert switches.markdown() in (ROOT / "docs" / "guide.md").read_text()


def test_read_at_each_call(monkeypatch):
    from flamefuse.runtime import adapt, native, preload
    from flamefuse.runtime.kernel import jit_enabled
    for name, check in (("FLAMEFUSE_NATIVE", native.enabled), ("FLAMEFUSE_PRELOAD", preload.enabled),
                        ("FLAMEFUSE_ADAPT", adapt.enabled), ("FLAMEFUSE_JIT", jit_enabled)):
        monkeypatch.setenv(name, "0")
        assert not check()
        monkeypatch.setenv(name, "1")
        assert check()
        monkeypatch.delenv(name)
        assert check()                               # the default


def test_values_and_defaults(monkeypatch):
    monkeypatch.delenv("FLAMEFUSE_EAGER_BELOW", raising=False)
    assert switches.integer("FLAMEFUSE_EAGER_BELOW") == 1 << 15
    monkeypatch.setenv("FLAMEFUSE_EAGER_BELOW", "10")
    assert switches.integer("FLAMEFUSE_EAGER_BELOW") == 10
    monkeypatch.setenv("FLAMEFUSE_EAGER_BELOW", "ten")
    assert switches.integer("FLAMEFUSE_EAGER_BELOW") == 1 << 15
    monkeypatch.setenv("FLAMEFUSE_PARTITIONER", "")
    assert switches.text("FLAMEFUSE_PARTITIONER") == "greedy"
    from flamefuse.lazy.recorder import Recorder
    monkeypatch.setenv("FLAMEFUSE_PARTITIONER", "linear")
    monkeypatch.setenv("FLAMEFUSE_EAGER_BELOW", "7")
    r = Recorder()
    assert (r.partitioner, r.eager_below) == ("linear", 7)
