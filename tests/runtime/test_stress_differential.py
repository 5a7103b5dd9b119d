"""Differential stress test: random small programs under NumPy and under flamefuse.lazy.

Each program is a list of steps on a few float64 arrays of one length: element-wise
operations (``+ - * maximum sqrt abs where``), views (reversed, strided, shifted slices),
in-place updates through views (``a[1:] += b[:-1]``, overlapping ones included), element
reads and writes, reductions, pickling round trips, ``copy.deepcopy``, ``np.random``'s
in-place ``shuffle`` (a generator and the legacy function, seeded), and read-only views
(``setflags(write=False)``, ``broadcast_to``) that later steps try to write. The same
program runs on ``numpy`` and on ``flamefuse.lazy`` (kernels interpreted, every operation
recorded, or with the default eager threshold), and a batch of them as a script under
``flamefuse fuse`` (a subprocess); every array must equal NumPy's bit for bit, every error
must be NumPy's (type and message), element reads are NumPy's scalars, and sums and means
agree within a small tolerance (NumPy sums pairwise). The steps' interpreter is
``tests/data/runtime/stress_program.py`` (also the script ``flamefuse fuse`` runs).
"""
import importlib.util
import json
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path

import numpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "data" / "runtime" / "stress_program.py"
_spec = importlib.util.spec_from_file_location("stress_program", PROGRAM)
stress_program = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stress_program)
_run, N = stress_program._run, stress_program.N
CLI = "import sys; from flamefuse.cli import main; sys.exit(main(sys.argv[1:]))"

_index = st.integers(0, 63)
STEP = st.one_of(
    st.tuples(st.just("binary"), _index, _index, st.sampled_from(["add", "subtract", "multiply",
                                                                  "maximum", "where"])),
    st.tuples(st.just("unary"), _index, st.sampled_from(["sqrt_abs", "negative", "scale"])),
    st.tuples(st.just("view"), _index, st.sampled_from(["reverse", "shift"])),
    st.tuples(st.just("inplace"), _index, _index, st.sampled_from(["iadd", "imul", "shifted"])),
    st.tuples(st.just("setitem"), _index, _index, st.floats(-9, 9, allow_nan=False)),
    st.tuples(st.just("element"), _index, _index),
    st.tuples(st.just("reduce"), _index, st.sampled_from(["sum", "max", "min", "mean"])),
    st.tuples(st.just("pickle"), _index),
    st.tuples(st.just("deepcopy"), _index),
    st.tuples(st.just("shuffle"), _index, st.integers(0, 3), st.booleans()),
    st.tuples(st.just("readonly"), _index),
    st.tuples(st.just("broadcast"), _index),
)
KINDS = {"binary": ["add", "subtract", "multiply", "maximum", "where"],
         "unary": ["sqrt_abs", "negative", "scale"], "view": ["reverse", "shift"],
         "inplace": ["iadd", "imul", "shifted"], "reduce": ["sum", "max", "min", "mean"]}


def _random_step(r: random.Random) -> tuple:
    """One step as STEP draws it, from ``r`` (for the batch run as a script)."""
    kind = r.choice(["binary", "unary", "view", "inplace", "setitem", "element", "reduce",
                     "pickle", "deepcopy", "shuffle", "readonly", "broadcast"])
    i, j = r.randrange(64), r.randrange(64)
    if kind in ("binary", "inplace"):
        return (kind, i, j, r.choice(KINDS[kind]))
    if kind in ("unary", "view", "reduce"):
        return (kind, i, r.choice(KINDS[kind]))
    if kind == "setitem":
        return (kind, i, j, round(r.uniform(-9, 9), 3))
    if kind == "element":
        return (kind, i, j)
    if kind == "shuffle":
        return (kind, i, r.randrange(4), r.random() < 0.5)
    return (kind, i)


def _compare(got, want):
    arrays, seen = got
    want_arrays, want_seen = want
    assert len(arrays) == len(want_arrays)
    for g, w in zip(arrays, want_arrays):
        numpy.testing.assert_array_equal(numpy.asarray(g), w, strict=True)
    assert len(seen) == len(want_seen)
    for g, w in zip(seen, want_seen):
        assert g[0] == w[0]
        if w[0] == "error":
            assert g == w
        elif w[0] == "element":
            assert type(g[1]) is type(w[1]) and g[1] == w[1]
        else:
            value = numpy.asarray(g[1])[()]
            assert type(value) is type(w[1])
            if w[0] in ("sum", "mean"):
                assert abs(value - w[1]) <= 1e-12 * max(1.0, abs(w[1]) * N)
            else:
                assert value == w[1]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(STEP, min_size=1, max_size=14), eager=st.booleans())
def test_random_programs_match_numpy(monkeypatch, steps, eager):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(eager_below=1 << 15 if eager else 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            want = _run(numpy, steps)
            got = _run(lazy, steps)
            _compare(got, want)
    finally:
        lazy.flush()
        lazy.configure(eager_below=1 << 15)


def test_a_program_with_every_step():
    """One fixed program through every kind of step (fails before issue 26's fixes)."""
    steps = [("binary", 0, 1, "add"), ("view", 4, "reverse"), ("readonly", 0),
             ("inplace", 6, 1, "iadd"), ("setitem", 6, 3, 1.0), ("element", 4, 2),
             ("inplace", 4, 5, "shifted"), ("element", 5, 0), ("pickle", 4), ("deepcopy", 5),
             ("shuffle", 4, 1, True), ("shuffle", 5, 2, False), ("broadcast", 2),
             ("setitem", 9, 0, 2.0), ("reduce", 4, "sum"), ("reduce", 5, "max"),
             ("unary", 7, "sqrt_abs"), ("binary", 10, 3, "where")]
    lazy.configure(eager_below=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            _compare(_run(lazy, steps), _run(numpy, steps))
    finally:
        lazy.flush()
        lazy.configure(eager_below=1 << 15)


def _same_json(got: dict, want: dict) -> None:
    assert len(got["arrays"]) == len(want["arrays"])
    for g, w in zip(got["arrays"], want["arrays"]):
        assert g == w                       # floats from JSON: bit for bit
    assert len(got["seen"]) == len(want["seen"])
    for g, w in zip(got["seen"], want["seen"]):
        if w[0] in ("sum", "mean"):
            assert g[0] == w[0] and g[2] == w[2]
            assert abs(g[1] - w[1]) <= 1e-12 * max(1.0, abs(w[1]) * N)
        else:
            assert g == w


def test_random_programs_under_flamefuse_fuse(tmp_path):
    """A batch of random programs as one script: ``python`` and ``flamefuse fuse`` (every
    operation recorded, kernels interpreted so that the batch stays fast) agree."""
    r = random.Random(26)
    programs = [[_random_step(r) for _ in range(r.randrange(4, 15))] for _ in range(12)]
    programs.append([("binary", 0, 1, "add"), ("view", 4, "reverse"), ("readonly", 0),
                     ("inplace", 6, 1, "iadd"), ("pickle", 4), ("shuffle", 4, 1, True),
                     ("broadcast", 2), ("setitem", 7, 0, 2.0), ("reduce", 4, "sum")])
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps(programs))
    env = dict(os.environ, PYTHONPATH=str(ROOT), FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               FLAMEFUSE_JIT="0", FLAMEFUSE_NATIVE="0")
    want = subprocess.run([sys.executable, str(PROGRAM), str(steps)], capture_output=True,
                          text=True, env=env, check=True, timeout=300).stdout
    got = subprocess.run([sys.executable, "-c", CLI, "fuse", "--eager-below", "0", str(PROGRAM),
                          str(steps)], capture_output=True, text=True, env=env, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    assert "operations recorded" in got.stderr
    for g, w in zip(json.loads(got.stdout), json.loads(want), strict=True):
        _same_json(g, w)
