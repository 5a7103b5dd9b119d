"""flamefuse.identity.source_digest: the sources' sizes and times, as Python checks bytecode;
any change of a file (its text, even with the same size and modification time) changes it."""
import os

from flamefuse import identity


def _digest(monkeypatch, folder):
    monkeypatch.setattr(identity, "_PACKAGE", folder)
    identity.source_digest.cache_clear()
    try:
        return identity.source_digest(("pkg", "one.py"))
    finally:
        identity.source_digest.cache_clear()


def test_a_changed_file_changes_the_digest(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "notes.txt").write_text("not source\n")
    one = tmp_path / "one.py"
    one.write_text("y = 2\n")
    first = _digest(monkeypatch, tmp_path)
    assert _digest(monkeypatch, tmp_path) == first                  # nothing changed
    (tmp_path / "pkg" / "notes.txt").write_text("changed, not source\n")
    assert _digest(monkeypatch, tmp_path) == first
    st = one.stat()
    one.write_text("y = 3\n")                                       # same size
    os.utime(one, ns=(st.st_atime_ns, st.st_mtime_ns))              # same modification time
    changed = _digest(monkeypatch, tmp_path)
    assert changed != first
    (tmp_path / "pkg" / "b.py").write_text("z = 1\n")               # a new module
    assert _digest(monkeypatch, tmp_path) not in (first, changed)
    (tmp_path / "pkg" / "b.py").unlink()
    assert _digest(monkeypatch, tmp_path) == changed
