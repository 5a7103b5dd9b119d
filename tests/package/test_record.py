"""``flamefuse derive`` keeps what it reports in the user cache, and imports only what a run needs.

A repeated ``derive`` is served from the record (the same output, without the
solver or the derivation); a changed spec, engine or generator source derives
again; a damaged record is rebuilt.  The import checks run ``flamefuse derive``
in a fresh interpreter and read its ``sys.modules`` (no timings).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from flamefuse.cli import main
from flamefuse.cli import derive_record as rec_mod

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLAMEFUSE_DERIVE_CACHE", "1")
    return tmp_path / "cache" / "derive"


def _json(capsys, *argv):
    assert main(["derive", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_repeated_derive_is_served_from_the_record(cache, capsys, monkeypatch):
    first = _json(capsys, str(SPECS / "spd_inverse.yaml"))
    assert len(list(cache.glob("*.json"))) == 1
    assert first["count"] == 1 and all(loop["derived"] for loop in first["loops"])

    def no_search(*_):
        raise AssertionError("searched again")
    monkeypatch.setattr(rec_mod, "compute", no_search)
    assert _json(capsys, str(SPECS / "spd_inverse.yaml")) == first
    assert main(["derive", str(SPECS / "spd_inverse.yaml")]) == 0      # the report too
    assert "1 fused loop invariant(s)" in capsys.readouterr().out


def test_the_record_gives_the_report_derived_anew(cache, capsys, monkeypatch):
    """Text report, LaTeX and SVG made from a kept record equal those made without the cache."""
    spec = str(SPECS / "chol_backsolve.yaml")          # no invariant: the explanation is kept too
    outs = []
    for setting in ("0", "1", "1"):
        monkeypatch.setenv("FLAMEFUSE_DERIVE_CACHE", setting)
        assert main(["derive", spec]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2] and "no fused invariant" in outs[0]
    assert len(list(cache.glob("*.json"))) == 1


def test_a_changed_spec_or_engine_derives_again(cache, capsys, tmp_path):
    spec = tmp_path / "mine.yaml"
    spec.write_text((SPECS / "cholesky.yaml").read_text())
    a = _json(capsys, str(spec))
    _json(capsys, str(spec), "--engine", "csp")
    assert len(list(cache.glob("*.json"))) == 2
    spec.write_text((SPECS / "trinv.yaml").read_text().replace("name: trinv", "name: mine"))
    b = _json(capsys, str(spec))
    assert len(list(cache.glob("*.json"))) == 3
    assert a["operations"] == ["chol"] and b["operations"] == ["trinv"]


def test_a_changed_generator_derives_again(cache, capsys, monkeypatch):
    from flamefuse import store
    _json(capsys, str(SPECS / "trinv.yaml"))
    real, computed = store.stamp, []
    monkeypatch.setattr(store, "stamp", lambda kind: "another generator" if kind == "derive" else real(kind))
    compute = rec_mod.compute
    monkeypatch.setattr(rec_mod, "compute", lambda *a, **k: computed.append(1) or compute(*a, **k))
    _json(capsys, str(SPECS / "trinv.yaml"))
    assert computed == [1]                       # the record of the old generator is a miss
    (record,) = cache.glob("*.json")             # and was overwritten, not kept beside
    assert b"another generator" in record.read_bytes().split(b"\n", 1)[0]


@pytest.mark.parametrize("damage", ["", "{", '{"invariants": 3}', "[]", "\x00\xff"])
def test_a_damaged_record_is_rebuilt(cache, capsys, damage):
    first = _json(capsys, str(SPECS / "trinv.yaml"))
    (record,) = cache.glob("*.json")
    record.write_bytes(damage.encode("latin-1"))
    assert _json(capsys, str(SPECS / "trinv.yaml")) == first
    from flamefuse.store import payload
    assert json.loads(payload(record))["report"] == first


def _modules_after(args, env_cache: Path, tmp_path) -> set:
    """The modules a fresh interpreter holds after ``flamefuse derive ARGS``."""
    code = ("import sys, runpy; sys.argv = ['flamefuse'] + sys.argv[1:]\n"
            "from flamefuse.cli import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(sys.argv[1:]) == 0\n"
            "print(' '.join(sorted(sys.modules)))")
    env = {"FLAMEFUSE_CACHE_DIR": str(env_cache), "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_derive_imports_only_what_it_needs(tmp_path):
    """Cold: the solver without pandas, the derivation without SymPy (no body of spd_inverse needs
    the algebra) and without scipy.linalg.  Repeated: neither solver nor derivation nor NumPy."""
    args = ["derive", "spd_inverse", "--json"]
    cold = _modules_after(args, tmp_path / "c", tmp_path)
    assert "ortools.sat.python.cp_model" in cold and "flamefuse.derive.loop" in cold
    assert not {"pandas", "sympy", "scipy.linalg", "rich"} & cold
    warm = _modules_after(args, tmp_path / "c", tmp_path)
    assert not {"ortools", "numpy", "sympy", "flamefuse.derive", "yaml", "rich"} & warm


@pytest.mark.parametrize("spec", ["trinv", "sylvester"])
def test_a_derivation_with_block_algebra_imports_neither_sympy_nor_scipy(spec, tmp_path):
    """trinv's bodies cancel terms (the block algebra, decided on random numbers: SymPy only with
    FLAMEFUSE_DERIVE_PROVE=1); sylvester's numeric twins solve Sylvester equations (NumPy)."""
    cold = _modules_after(["derive", spec, "--json"], tmp_path / "c", tmp_path)
    assert "flamefuse.derive.algebra" in cold and "numpy" in cold
    assert not {"sympy", "scipy", "scipy.linalg"} & cold


def test_values_follow_numbers_only_or_symbols_too():
    """The numeric check follows numbers only (Tags, no SymPy); the symbolic search uses SymPy,
    with the same numbers."""
    from flamefuse.derive.blocks import Blk, Ref
    from flamefuse.derive.values import Tag, Values
    ref = Ref(Blk("A", 1, 1), frozenset())
    numeric, symbolic = Values(symbolic=False)[ref], Values()[ref]
    assert isinstance(numeric.sym, Tag) and type(symbolic.sym).__name__ == "MatrixSymbol"
    assert (numeric.num == symbolic.num).all()


def test_the_sympy_cross_check_is_not_served_the_default_record(monkeypatch):
    """FLAMEFUSE_DERIVE_PROVE=1 derives with SymPy's proofs: a record of its own."""
    args = (SPECS / "trinv.yaml", (SPECS / "trinv.yaml").read_text(), "cpsat")
    monkeypatch.delenv("FLAMEFUSE_DERIVE_PROVE", raising=False)
    default = rec_mod.key(*args)
    monkeypatch.setenv("FLAMEFUSE_DERIVE_PROVE", "1")
    assert rec_mod.key(*args) != default
    monkeypatch.setenv("FLAMEFUSE_DERIVE_PROVE", "0")
    assert rec_mod.key(*args) == default
