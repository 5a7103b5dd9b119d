"""Numba's cache files are held to flamefuse.trust's rules (numba_cache._untrusted applies them).

Before, ``_untrusted`` wrote the rules a second time and walked the folders above the cache as
the path spells them: a cache folder reached through a link into a folder anyone may rename in
was trusted. Now it asks :func:`flamefuse.trust.folder_problem`, which walks the real folders.
"""
from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from flamefuse import trust
from flamefuse.numba_cache import _untrusted

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")


def cache_in(folder, index=None):
    """The attributes of a Numba cache that _untrusted reads."""
    return SimpleNamespace(cache_path=str(folder), _cache_file=SimpleNamespace(_index_path=index))


def private(path):
    path.mkdir()
    path.chmod(0o700)
    return path


def test_a_private_folder_and_index_are_trusted(tmp_path):
    folder = private(tmp_path / "c")
    index = folder / "f.nbi"
    index.write_bytes(b"x")
    index.chmod(0o600)
    assert _untrusted(cache_in(folder, str(index))) is None
    assert _untrusted(cache_in(tmp_path / "missing")) is None     # nothing there: Numba finds nothing


def test_the_rules_are_trusts(tmp_path):
    folder = private(tmp_path / "c")
    index = folder / "f.nbi"
    index.write_bytes(b"x")
    index.chmod(0o666)
    assert _untrusted(cache_in(folder, str(index))) == trust.file_problem(index) is not None
    data = folder / "f.nbc"
    data.symlink_to(index)
    assert _untrusted(cache_in(folder), str(data)) == trust.file_problem(data) is not None
    folder.chmod(0o777)
    assert _untrusted(cache_in(folder, str(index))) == trust.folder_problem(folder) is not None


def test_a_cache_reached_through_a_link_is_checked_where_it_really_is(tmp_path):
    """A folder anyone may rename in (mode 777, no sticky bit) above the real cache folder."""
    trust._ancestors.cache_clear()
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    real = private(open_dir / "real")
    safe = private(tmp_path / "safe")
    (safe / "link").symlink_to(real)
    folder = private(real / "numba")
    why = _untrusted(cache_in(safe / "link" / "numba"))
    assert why is not None and str(open_dir) in why, why
    assert _untrusted(cache_in(folder)) == why
