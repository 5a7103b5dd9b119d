"""The plain path's ``os.path`` strings name what its ``pathlib`` paths named (docs/startup.md).

A run settled as plain NumPy no longer imports ``pathlib``: the script's name and ``sys.argv[0]``
(``cli.fuse._shown``), the adapt entry's key (``adapt_entry.key``: ``os.path.realpath`` for
``Path.resolve``), the script's absolute path (``os.path.join(os.getcwd(), ...)`` for
``Path.absolute``, which resolves no ``..`` before the links), the store's folders and file
names and the trust checks' messages must be byte for byte what the ``pathlib`` forms gave,
so that existing entries keep their names. The references below are those former forms.
"""
import os
from pathlib import Path

import pytest

from flamefuse import jsontext, store, trust
from flamefuse.cli.fuse import _shown
from flamefuse.digest import sha256
from flamefuse.runtime import adapt_entry

NAMES = ["s.py", "./s.py", "sub/../s.py", "sub//./t.py", "sub/t.py/", ".//sub/t.py", "/", ".",
         "//net/x.py", "///abs/x.py", "a/b/../../s.py"]


@pytest.mark.parametrize("name", NAMES)
def test_the_script_is_named_as_pathlib_named_it(name):
    assert _shown(name) == str(Path(name))
    assert _shown(Path(name)) == str(Path(name))


def _old_key(script: Path, argv, text: bytes) -> str:
    args = ", ".join(jsontext.quote(str(a)) for a in argv)
    named = f"[{jsontext.quote(str(script.resolve()))}, [{args}]]".encode()
    return sha256(named + b"\0" + text).hexdigest()[:32]


def test_the_adapt_key_is_the_one_pathlib_gave_through_links_and_dotdot(tmp_path, monkeypatch):
    """Through a linked working folder ``..`` goes up from the link's target, as before."""
    real = tmp_path / "real" / "work"
    real.mkdir(parents=True)
    (tmp_path / "real" / "s.py").write_text("print(1)\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "s.py").write_text("print(2)\n")
    os.symlink(real, tmp_path / "elsewhere" / "link")
    monkeypatch.chdir(tmp_path / "elsewhere" / "link")
    for name in ["../s.py", ".//../s.py", str(tmp_path / "elsewhere" / "link" / ".." / "s.py")]:
        text = Path(name).read_bytes()
        assert text == b"print(1)\n"                    # the link's target's folder, not elsewhere/
        old = _old_key(Path(name).absolute(), ["-n", "é"], text)
        here = os.path.join(os.getcwd(), _shown(name))      # as cli.fuse.run makes it
        assert adapt_entry.key(here, ["-n", "é"], text) == old
        assert adapt_entry.key(here, ["-n", "é"]) == old     # (the text read here)
        assert adapt_entry.key(Path(name).absolute(), ["-n", "é"], text) == old
        assert Path(here).resolve() == Path(name).absolute().resolve()


@pytest.mark.parametrize("root", ["cache", "cache/", "./cache//", "sub/../cache"])
def test_the_store_names_the_folders_and_files_pathlib_named(tmp_path, monkeypatch, root):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", root)
    store._usable.cache_clear()
    try:
        assert store.cache_root() == Path(root)
        for kind, key in (("adapt", "a" * 32), ("loops", "x/y key"), ("scripts", "k")):
            old = Path(root) / kind / f"{store.name(key)}.json"
            assert store.path(kind, key, ".json") == old
            assert Path(store._file(kind, key, ".json")) == old
            assert os.path.samefile(os.path.dirname(store._file(kind, key, ".json")), old.parent)
            assert store.folder(kind) == Path(root) / kind
        store.put("adapt", "k1", b"payload", ".bin")
        assert store.get("adapt", "k1", ".bin") == b"payload"    # written and read: one file
        assert store.payload(str(store.path("adapt", "k1", ".bin"))) == b"payload"
    finally:
        store._usable.cache_clear()


def _old_folder_problem(path, top=None):
    """flamefuse.trust.folder_problem as it was, on pathlib."""
    path = Path(os.path.abspath(path))
    top = path if top is None else Path(os.path.abspath(top))
    try:
        rel = path.relative_to(top)
    except ValueError:
        top, rel = path, Path()
    strict = [top] + [top.joinpath(*rel.parts[:k]) for k in range(1, len(rel.parts) + 1)]
    for folder in strict:
        try:
            st = os.stat(folder)
        except OSError as err:
            return f"{folder} cannot be examined ({err.strerror})"
        if not os.path.isdir(folder):
            return f"{folder} is not a folder"
        why = trust._mode_problem(st, f"the folder {folder}")
        if why:
            return why
    for folder in (Path(os.path.realpath(top)).parent, *Path(os.path.realpath(top)).parent.parents):
        try:
            st = os.stat(folder)
        except OSError as err:
            return f"{folder} cannot be examined ({err.strerror})"
        why = trust._ancestor_problem(st, folder)
        if why:
            return why
    return None


def test_the_trust_checks_say_what_they_said(tmp_path):
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    (root / "a").chmod(0o700)
    (root / "a" / "b").chmod(0o700)
    (root / "file").write_text("x")
    open_one = tmp_path / "open"
    open_one.mkdir()
    open_one.chmod(0o777)                      # others may write, no sticky bit
    (open_one / "in").mkdir(mode=0o700)
    cases = [(root / "a" / "b", root), (root / "a" / "b", None), (root, root), (root / "a", root / "a" / "b"),
             (root / "missing", root), (root / "file", root), (str(root / "a") + "/", str(root)),
             (root / "a" / ".." / "a" / "b", root), (open_one / "in", open_one / "in"), (open_one / "in", open_one),
             (Path("/"), Path("/")), (root / "a" / "b", Path("/"))]
    trust._ancestors.cache_clear()
    for path, top in cases:
        for args in ((path, top), (str(path), None if top is None else str(top))):
            got = trust.folder_problem(*args)
            trust._ancestors.cache_clear()
            assert got == _old_folder_problem(*args), args
    assert trust.folder_problem(root / "a" / "b", root) is None or os.geteuid() == 0


@pytest.mark.parametrize("xdg", [None, "", "  ", "/x/cache", "/x/cache/", "rel/cache", " /x/cache"])
@pytest.mark.parametrize("home", [None, "/h/me", "/h/me/", "relative"])
def test_the_default_cache_root_is_platformdirs_one(monkeypatch, xdg, home):
    """On Linux the default root is computed without platformdirs (which imports pathlib) where
    the answer is plain; the same folder as platformdirs gives, whatever the environment."""
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv("FLAMEFUSE_CACHE_DIR", raising=False)
    for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        want = platformdirs.user_cache_dir("flamefuse", appauthor=False)
    except RuntimeError:            # (no home folder it accepts: platformdirs' own answer)
        return
    assert store._root() == want
    assert store.cache_root() == Path(want)
