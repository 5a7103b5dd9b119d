"""The cache folder as one store (issue 28 item 5): its size per kind, least-recently-used
eviction of whole entries to a cap, clearing, the ``flamefuse cache`` command, and the
location from ``platformdirs``."""
import os
import sys
import types

import pytest

from flamefuse import cache_store
from flamefuse.cli import main


def put(path, size, age_s):
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_bytes(b"x" * size)
    t = 1_700_000_000 - age_s
    os.utime(path, (t, t))
    return path


@pytest.fixture
def store(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(root))
    old = [put(root / "kernels" / "ffk_old.py", 1000, 500),
           put(root / "kernels" / "__pycache__" / "ffk_old.kernel-3.py311.nbi", 1000, 500),
           put(root / "kernels" / "__pycache__" / "ffk_old.kernel-3.py311.1.nbc", 1000, 400)]
    mid = [put(root / "native" / "abc.so", 2000, 300), put(root / "native" / "abc.sha256", 10, 300)]
    new = [put(root / "plans" / "p1.plan", 1500, 10), put(root / "scripts" / "s1.json", 100, 5)]
    return root, old, mid, new


def test_usage_per_kind(store):
    root, *_ = store
    assert cache_store.usage(root) == {"kernels": (3, 3000), "native": (2, 2010), "plans": (1, 1500),
                                       "scripts": (1, 100)}


def test_prune_removes_whole_least_recently_used_entries(store):
    root, old, mid, new = store
    assert cache_store.prune(root, 3000) == (5, 5010)     # the module with its Numba files, the library
    assert not any(p.exists() for p in old + mid) and all(p.exists() for p in new)
    assert cache_store.prune(root, 3000) == (0, 0)


def test_a_recent_read_keeps_an_entry(store):
    root, old, mid, new = store
    os.utime(old[0], (1_700_000_000, 1_700_000_000 - 500))    # read now (access time), written long ago
    cache_store.prune(root, 3000)
    assert all(p.exists() for p in old) and not any(p.exists() for p in mid)


def test_clear_never_follows_links(store, tmp_path):
    root, *_ = store
    outside = put(tmp_path / "precious" / "data.txt", 10, 0)
    (root / "native" / "link.so").symlink_to(outside)
    (root / "plans" / "folder_link").symlink_to(outside.parent, target_is_directory=True)
    files, size = cache_store.clear(root)
    assert files == 7 and size == 6610
    assert outside.exists() and cache_store.usage(root) == {k: (0, 0) for k in ("kernels", "native", "plans", "scripts")}


def test_maybe_prune_runs_once_per_period(store, monkeypatch):
    root, old, mid, new = store
    monkeypatch.setenv("FLAMEFUSE_CACHE_MAX", "4000")
    cache_store.maybe_prune(root)
    assert not old[0].exists() and (root / ".pruned").exists()
    put(root / "kernels" / "ffk_again.py", 9000, 1000)
    cache_store.maybe_prune(root)                           # pruned a moment ago: not again
    assert (root / "kernels" / "ffk_again.py").exists()


def test_sizes():
    assert [cache_store.parse_size(t) for t in ("0", "10", "1K", "1.5M", "2G", "3GiB", "4mb")] == \
        [0, 10, 1024, 3 << 19, 2 << 30, 3 << 30, 4 << 20]
    with pytest.raises(ValueError):
        cache_store.parse_size("lots")


def test_the_command(store, capsys):
    root, old, mid, new = store
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(root) in out and "in use" in out and "kernels" in out and "2.9 KiB" in out
    assert main(["cache", "prune", "--max-size", "3000"]) == 0
    assert "removed 5 files" in capsys.readouterr().out and all(p.exists() for p in new)
    assert main(["cache", "clear"]) == 0
    assert "removed 2 files" in capsys.readouterr().out and not any(p.exists() for p in new)
    os.chmod(root, 0o777)
    try:
        assert main(["cache", "info"]) == 0 and "refused" in capsys.readouterr().out
        assert main(["cache", "clear"]) == 2
        assert "not this user's own private folder" in capsys.readouterr().err
    finally:
        os.chmod(root, 0o700)


def test_the_location_comes_from_platformdirs(monkeypatch, tmp_path):
    from flamefuse.cache import cache_root
    fake = types.ModuleType("platformdirs")
    fake.user_cache_dir = lambda name, appauthor=None: str(tmp_path / "platform" / name)
    monkeypatch.setitem(sys.modules, "platformdirs", fake)
    monkeypatch.delenv("FLAMEFUSE_CACHE_DIR", raising=False)
    # (on Linux a plain environment's root is computed as platformdirs computes it, without
    # importing it: tests/core/test_plain_paths.py; any other setting is platformdirs' to read)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache_root() == tmp_path / "platform" / "flamefuse"
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"
