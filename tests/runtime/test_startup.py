"""A warm ``flamefuse fuse`` costs little more than ``python``: what a warm run must not do.

Checked in subprocesses (a process's imports and writes are what is measured): a warm fused
run imports neither Numba nor SciPy nor ``numpy.random`` when the script uses none of them,
starts no subprocess, and writes nothing into the cache when nothing it learned changed; a
warm plain-NumPy run does not import the fusion machinery (tests/runtime/test_adapt.py) and
writes nothing either. Results are NumPy's throughout.
"""
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# fusing pays: a few element-wise passes over 400 000 elements
FUSED = """
import sys
import numpy as np
x = np.linspace(0.0, 1.0, 400_000)
y = np.sin(x) * 2.0 + x * x
for _ in range(5):
    y = (y - 1.0) / 3.0 + np.cos(x)
np.save(OUT, y)
print(json.dumps(sorted(sys.modules)))
"""

# fusing does not pay: a scalar loop over two-element slices
PLAIN = """
import sys
import numpy as np
a = np.zeros(40)
for i in range(1, 40):
    a[i] = a[i - 1] * 0.5 + np.sqrt(float(i))
np.save(OUT, a)
print(json.dumps(sorted(sys.modules)))
"""

# the command under an audit hook: the subprocesses it starts and the files it opens to write
AUDITED = """
import json, sys
events = []
def hook(event, args):
    if event == "subprocess.Popen":
        events.append(["subprocess", str(args[1])])
    elif event == "open" and isinstance(args[0], str) and (
            "w" in str(args[1] or "") or "a" in str(args[1] or "") or (args[2] or 0) & 0o1103):
        events.append(["write", args[0]])
sys.addaudithook(hook)
from flamefuse.cli import main
try:
    status = main(sys.argv[1:])
finally:
    sys.stderr.write("AUDIT " + json.dumps(events) + "\\n")
sys.exit(status)
"""


def _fuse(tmp_path, source):
    script = tmp_path / "s.py"
    out = tmp_path / "out.npy"
    script.write_text(f"import json\nOUT = {str(out)!r}\n" + textwrap.dedent(source))
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_ADAPT="1",
               FLAMEFUSE_PLAN_CACHE="1", FLAMEFUSE_PRELOAD="1", FLAMEFUSE_NATIVE="1",   # as users run
               # adaptive fusion's probe (the third run, plain NumPy) measures fused faster, as
               # FUSED is here: injected, so that load cannot make it plain (flamefuse.runtime.probe)
               FLAMEFUSE_PROBE_SECONDS="0.01,0.03",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", AUDITED, "fuse", str(script)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    audit = next(line for line in r.stderr.splitlines() if line.startswith("AUDIT "))
    events = json.loads(audit[len("AUDIT "):])
    modules = set(json.loads(r.stdout.strip().splitlines()[-1]))
    return numpy.load(out), modules, events, r.stderr


def _plain(tmp_path, source):
    script = tmp_path / "plain.py"
    out = tmp_path / "plain.npy"
    script.write_text(f"import json\nOUT = {str(out)!r}\n" + textwrap.dedent(source))
    subprocess.run([sys.executable, str(script)], check=True, capture_output=True, timeout=600)
    return numpy.load(out)


def _snapshot(folder):
    """Every file under ``folder`` with its modification time and size."""
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in folder.rglob("*") if p.is_file()}


def _warm(tmp_path, source):
    """Run ``source`` until it is warm (learned, native libraries built, lists kept; a fused
    script's third run is adaptive fusion's probe, plain NumPy, which settles it fused)."""
    for _ in range(3):
        _fuse(tmp_path, source)


def test_a_warm_fused_run_imports_no_numba_scipy_or_numpy_random(tmp_path):
    _warm(tmp_path, FUSED)
    got, modules, _, err = _fuse(tmp_path, FUSED)
    assert "ran as plain NumPy" not in err, err
    assert "flamefuse's own start-up" in err and ", exit " in err, err      # the summary says both
    assert numpy.array_equal(got, _plain(tmp_path, FUSED))
    assert "flamefuse.lazy" in modules, "the script ran fused"
    for name in ("numba", "llvmlite", "scipy", "numpy.random", "ortools"):
        assert name not in modules, f"a warm fused run imported {name}"


def test_a_warm_run_starts_no_subprocess_and_writes_nothing_to_the_cache(tmp_path):
    _warm(tmp_path, FUSED)
    before = _snapshot(tmp_path / "cache")
    got, _, events, err = _fuse(tmp_path, FUSED)
    assert numpy.array_equal(got, _plain(tmp_path, FUSED))
    cache = str(tmp_path / "cache")
    assert not [e for e in events if e[0] == "subprocess"], events
    assert not [e for e in events if e[0] == "write" and e[1].startswith(cache)], events
    assert _snapshot(tmp_path / "cache") == before


def test_a_warm_plain_numpy_run_starts_no_subprocess_and_writes_nothing(tmp_path):
    _warm(tmp_path, PLAIN)
    before = _snapshot(tmp_path / "cache")
    got, modules, events, err = _fuse(tmp_path, PLAIN)
    assert "ran as plain NumPy" in err, err
    assert numpy.array_equal(got, _plain(tmp_path, PLAIN))
    assert "flamefuse.lazy" not in modules and "numba" not in modules
    assert not [e for e in events if e[0] == "subprocess"], events
    assert _snapshot(tmp_path / "cache") == before


def test_a_changed_decision_or_kernel_list_is_still_written(tmp_path):
    """Writing only what changed must not lose what did: a script whose text changes learns and
    keeps its new decisions and kernel list."""
    _warm(tmp_path, FUSED)
    before = _snapshot(tmp_path / "cache")
    changed = FUSED.replace("range(5)", "range(6)")
    got, _, _, _ = _fuse(tmp_path, changed)
    assert numpy.array_equal(got, _plain(tmp_path, changed))
    after = _snapshot(tmp_path / "cache")
    new = {name for name in after if after[name] != before.get(name)}
    assert any(name.startswith("adapt/") for name in new), new
    assert any(name.startswith("scripts/") for name in new), new


# what a warm run's start-up does not import (docs/startup.md): argparse (``fuse``'s common
# forms are parsed without it), OpenSSL's hashes (flamefuse.digest), dataclasses on the plain
# path, and the linear-algebra front end (flamefuse.synth's modules) where no product needs it
NOT_AT_START = ("argparse", "_hashlib", "hashlib")


def test_a_warm_plain_run_imports_no_argparse_openssl_or_dataclasses(tmp_path):
    _warm(tmp_path, PLAIN)
    got, modules, _, err = _fuse(tmp_path, PLAIN)
    assert "ran as plain NumPy" in err, err
    assert numpy.array_equal(got, _plain(tmp_path, PLAIN))
    for name in NOT_AT_START + ("dataclasses", "flamefuse.errors"):
        assert name not in modules, f"a warm plain run imported {name}"


def test_a_warm_fused_run_without_products_imports_no_linalg_front_end(tmp_path):
    _warm(tmp_path, FUSED)
    got, modules, _, err = _fuse(tmp_path, FUSED)
    assert "ran as plain NumPy" not in err, err
    assert numpy.array_equal(got, _plain(tmp_path, FUSED))
    for name in NOT_AT_START + ("flamefuse.lazy.linalg", "flamefuse.synth.chain"):
        assert name not in modules, f"a warm fused run imported {name}"
    # nor what only an error, --explain or another partitioner needs
    for name in ("flamefuse.synth", "flamefuse.synth.explain", "flamefuse.errors", "traceback"):
        assert name not in modules, f"a warm fused run imported {name}"
    # nor dataclasses: the runtime's value classes (Program, Op, View, Plan, Code, ...) are
    # flamefuse.values classes, whose methods are not compiled at import (about 5 ms of start-up)
    assert "dataclasses" not in modules, "a warm fused run imported dataclasses"
    assert "flamefuse.values" in modules


# fusing does not pay; the first line says what the script finds imported (no json in the script)
FIRST_LINE = """
import sys
print("BEFORE " + " ".join(sorted(sys.modules)))
import numpy as np
a = np.zeros(40)
for i in range(1, 40):
    a[i] = a[i - 1] * 0.5 + np.sqrt(float(i))
np.save(OUT, a)
print("AFTER " + " ".join(sorted(sys.modules)))
"""


def _fuse_plainly(tmp_path, source, runs=4):
    """The last of ``runs`` ``flamefuse fuse`` runs of ``source`` (no audit hook, no json in the
    script): (what it found imported at its first line, at its end, its stderr, its result)."""
    script = tmp_path / "first.py"
    out = tmp_path / "first.npy"
    script.write_text(f"OUT = {str(out)!r}\n" + textwrap.dedent(source))
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_ADAPT="1",
               FLAMEFUSE_PRELOAD="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                           capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    before = set(next(ln for ln in lines if ln.startswith("BEFORE ")).split()[1:])
    after = set(next(ln for ln in lines if ln.startswith("AFTER ")).split()[1:])
    return before, after, r.stderr, numpy.load(out)


def test_a_warm_plain_run_leaves_numpy_json_threading_and_the_model_unimported(tmp_path):
    """As under ``python``, the script imports NumPy itself (a script that sets
    ``OPENBLAS_NUM_THREADS`` before ``import numpy`` is obeyed), and a plain run reads its
    decisions without json, adaptive fusion's model (flamefuse.runtime.adapt) or threading."""
    before, after, err, got = _fuse_plainly(tmp_path, FIRST_LINE)
    assert "ran as plain NumPy" in err, err
    assert numpy.array_equal(got, _plain(tmp_path, FIRST_LINE.replace("import sys", "import sys, json")))
    for name in ("numpy", "json", "threading", "flamefuse.runtime.adapt", "flamefuse.lazy"):
        assert name not in before, f"a warm plain run imported {name} before the script's first line"
    for name in ("json", "threading", "flamefuse.runtime.adapt", "flamefuse.lazy", "dataclasses"):
        assert name not in after, f"a warm plain run imported {name}"


def test_a_script_is_compiled_from_its_bytes_as_python_compiles_it(tmp_path):
    """Its ``coding`` line names its encoding (a Latin-1 script ran into a UnicodeDecodeError)."""
    script = tmp_path / "latin.py"
    script.write_bytes('# -*- coding: latin-1 -*-\ns = "\u00e9t\u00e9"\nprint(len(s), ord(s[0]))\n'
                       .encode("latin-1"))
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert want.returncode == 0 and want.stdout == "3 233\n", want.stderr
    for _ in range(2):          # learning, then as decided
        got = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                             capture_output=True, text=True, env=env, timeout=600)
        assert got.returncode == 0, got.stderr
        assert got.stdout == want.stdout


# a compiled loop in a function (flamefuse.loops), and a module-level loop
LOOPED = """
import sys
import numpy as np

def smooth(a, b, n):
    for i in range(1, n - 1):
        b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
    return b

a = np.linspace(0.0, 1.0, 300) ** 2
b = np.zeros(300)
for _ in range(3):
    b = smooth(a, b, 300)
np.save(OUT, b)
print(json.dumps(sorted(sys.modules)))
"""


MODULE_LOOPED = """
import sys
import numpy as np

a = np.linspace(0.0, 1.0, 300) ** 2
b = np.zeros(300)
for k in range(3):
    for i in range(1, 299):
        b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0 + b[i] * 0.5
np.save(OUT, b * (i + k))
print(json.dumps(sorted(sys.modules)))
"""


# a compiled module-level loop too (its scope kept with its site: flamefuse.loops.site.ModuleScope)
@pytest.mark.parametrize("script, sites", [(LOOPED, "1 of 2"), (MODULE_LOOPED, "1 of 1")],
                         ids=["function", "module"])
def test_a_warm_run_reads_its_compiled_loops_from_the_store_without_an_ast_pass(tmp_path, script, sites):
    """The script's guarded code and loop sites, and its loop's rendered text, are kept per script
    digest (flamefuse.loops.kept): a warm run neither walks the AST nor renders."""
    LOOPED = script             # noqa: N806
    for _ in range(3):
        _fuse(tmp_path, LOOPED)
        subprocess.run([sys.executable, "-c", "from flamefuse.runtime import compiler; compiler.wait(300)"],
                       env=dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
                                PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")),
                       check=True, timeout=600)
    before = _snapshot(tmp_path / "cache")
    got, modules, events, err = _fuse(tmp_path, LOOPED)
    assert numpy.array_equal(got, _plain(tmp_path, LOOPED))
    ran = re.search(sites + r" loop sites compilable; (\d+) calls ran compiled", err)
    assert ran and int(ran.group(1)) >= 1, err         # (the guard may time one call as written)
    for name in ("flamefuse.loops.rewrite", "flamefuse.loops.extract", "flamefuse.loops.render"):
        assert name not in modules, f"a warm run imported {name}"
    assert _snapshot(tmp_path / "cache") == before


STAMPED = """
import sys
from flamefuse import store, identity, machine  # (imported first: their own files)
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
for kind in ("plans", "adapt", "loops", "synth"):
    store.stamp(kind)
print("\\n".join(p for p in opened if p.endswith(".py")))
"""


def test_the_stamps_read_no_source_text(tmp_path):
    """A kind's stamp digests its sources' sizes and times as Python checks its bytecode
    (hashing the plans kind's 188 KB of text cost every fused run 1.2 ms)."""
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", STAMPED], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    read = [p for p in r.stdout.split() if os.sep + "flamefuse" + os.sep in p]
    assert not read, read


def test_a_warm_fused_run_imports_no_fractions(tmp_path):
    """NumPy's complex product's module (imported where a kernel's source is made) imports
    fractions and decimal only where an exactly rounded fma is computed."""
    _warm(tmp_path, FUSED)
    got, modules, _, err = _fuse(tmp_path, FUSED)
    assert "ran as plain NumPy" not in err, err
    assert numpy.array_equal(got, _plain(tmp_path, FUSED))
    for name in ("fractions", "decimal"):
        assert name not in modules, f"a warm fused run imported {name}"


# fusing pays; the script imports no json (the end says what the process imported)
FUSED_ALONE = """
import sys
import numpy as np
x = np.linspace(0.0, 1.0, 400_000)
y = np.sin(x) * 2.0 + x * x
for _ in range(5):
    y = (y - 1.0) / 3.0 + np.cos(x)
np.save(OUT, y)
print("AFTER " + " ".join(sorted(sys.modules)))
"""


def test_a_warm_fused_run_imports_no_json(tmp_path):
    """flamefuse.lazy wraps json's encoder when json is imported (flamefuse.lazy.interop), and
    the background compiler imports json only to want a kernel: a warm run that keeps no new
    decision imports none (json: 1.1 ms)."""
    script = tmp_path / "alone.py"
    out = tmp_path / "alone.npy"
    script.write_text(f"OUT = {str(out)!r}\n" + textwrap.dedent(FUSED_ALONE))
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_ADAPT="1",
               FLAMEFUSE_PLAN_CACHE="1", FLAMEFUSE_PRELOAD="1", FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PROBE_SECONDS="0.01,0.03",     # (the probe measures fused faster: see _fuse)
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for _ in range(5):
        r = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)],
                           capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
    assert "ran as plain NumPy" not in r.stderr, r.stderr
    after = set(next(ln for ln in r.stdout.splitlines() if ln.startswith("AFTER ")).split()[1:])
    assert "flamefuse.lazy" in after
    assert "json" not in after, "a warm fused run imported json"
    assert numpy.array_equal(numpy.load(out), _plain(tmp_path, FUSED_ALONE))


# what pathlib brings (about 4 ms of CPU: urllib.parse with ipaddress, fnmatch, ntpath), which
# NumPy does not import: a run settled as plain NumPy uses os.path strings (docs/startup.md)
PATHLIB = ("pathlib", "urllib", "urllib.parse", "ipaddress", "fnmatch", "ntpath")


def test_a_warm_plain_run_imports_no_pathlib_where_an_installed_package_would_not(tmp_path):
    """As from a wheel: ``python -S`` with flamefuse and the site-packages on the path (an
    editable install's finder, which ``site`` imports, brings pathlib into every process, the
    script's own ``python`` run included). Only what the script run as ``python -S`` imports
    itself may be imported."""
    import site
    script = tmp_path / "plainly.py"
    script.write_text(textwrap.dedent(FIRST_LINE).replace("np.save(OUT, a)", "print(repr(a.tolist()))"))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), FLAMEFUSE_ADAPT="1",   # (the
               FLAMEFUSE_PRELOAD="1", PYTHONPATH=os.pathsep.join(      # default cache root)
                   [ROOT, *site.getsitepackages(), os.environ.get("PYTHONPATH", "")]))
    env.pop("FLAMEFUSE_CACHE_DIR", None)

    def modules(r, tag):
        assert r.returncode == 0, r.stderr
        return set(next(ln for ln in r.stdout.splitlines() if ln.startswith(tag + " ")).split()[1:])

    want = subprocess.run([sys.executable, "-S", str(script)], capture_output=True, text=True,
                          env=env, timeout=600)
    python_has = modules(want, "AFTER")
    for _ in range(4):
        r = subprocess.run([sys.executable, "-S", "-m", "flamefuse.cli", "fuse", str(script)],
                           capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
    assert "ran as plain NumPy" in r.stderr, r.stderr
    assert r.stdout.splitlines()[1] == want.stdout.splitlines()[1]     # NumPy's numbers
    extra = [m for m in PATHLIB if m in modules(r, "AFTER") and m not in python_has]
    assert not extra, f"a warm plain run imported {extra}"
    assert os.listdir(tmp_path / "xdg" / "flamefuse" / "adapt")        # (its cache)


# fusing pays (the probe's test hook settles it fused); its result printed, not saved (NumPy's
# ``save`` may import pathlib itself)
FUSED_PRINTED = """
import sys
import numpy as np
x = np.linspace(0.0, 1.0, 400_000)
y = np.sin(x) * 2.0 + x * x
for _ in range(5):
    y = (y - 1.0) / 3.0 + np.cos(x)
print(repr(y[::997].tolist()))
print("AFTER " + " ".join(sorted(sys.modules)))
"""


def test_a_warm_fused_run_imports_no_pathlib_where_an_installed_package_would_not(tmp_path):
    """As the plain run above, for a run that stays fused: its start-up (adaptive fusion's
    model, the kernel list, the native libraries' folder) and its flushes (the background
    compiler's job folder) use ``os.path`` strings (about 4 ms of start-up: docs/startup.md)."""
    import site
    script = tmp_path / "fusedly.py"
    script.write_text(FUSED_PRINTED)
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_ADAPT="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_NATIVE="1", FLAMEFUSE_PROBE_SECONDS="0.01,0.03",
               PYTHONPATH=os.pathsep.join([ROOT, *site.getsitepackages(), os.environ.get("PYTHONPATH", "")]))

    def modules(r):
        assert r.returncode == 0, r.stderr
        return set(next(ln for ln in r.stdout.splitlines() if ln.startswith("AFTER ")).split()[1:])

    want = subprocess.run([sys.executable, "-S", str(script)], capture_output=True, text=True,
                          env=env, timeout=600)
    python_has = modules(want)
    for _ in range(5):
        r = subprocess.run([sys.executable, "-S", "-m", "flamefuse.cli", "fuse", str(script)],
                           capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
    assert "ran as plain NumPy" not in r.stderr and "flamefuse.lazy" in modules(r), r.stderr
    assert "native libraries loaded 0 " not in r.stderr, r.stderr      # warm: its library loaded
    assert r.stdout.splitlines()[0] == want.stdout.splitlines()[0]       # NumPy's numbers
    extra = [m for m in PATHLIB if m in modules(r) and m not in python_has]
    assert not extra, f"a warm fused run imported {extra}"
