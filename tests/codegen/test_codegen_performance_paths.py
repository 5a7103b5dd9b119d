"""Properties the performance work must keep: bitwise determinism, correctness at any size, tuning cache.

* Two runs of a generated kernel on the same input give identical bytes
  (same block size, same BLAS thread count: this process).
* Hypothesis-drawn sizes and block sizes (the trsm-by-inverse path, ragged
  last blocks, n < block size) agree with the NumPy/SciPy references.
* :mod:`flamefuse.codegen.tune` times the candidates once and then answers
  from its per-machine cache.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flamefuse.codegen import load_generated, tune

sys.path.insert(0, str(Path(__file__).parent))
from codegen_cases import CASES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BENCHED = ("spd_inverse", "chol_solve", "chol_trsm", "general_inverse")
MODULES = {spec: load_generated(ROOT / "generated" / f"{spec}.py") for spec in BENCHED + ("ul", "lu", "trsm")}


def _copies(inputs):
    return [x.copy(order="F") for x in inputs]


@pytest.mark.parametrize("spec", BENCHED)
@pytest.mark.parametrize("nb", [16, 48])
def test_two_runs_give_identical_bytes(spec, nb):
    inputs, _ = CASES[spec](np.random.default_rng(7), 181)
    for fn in MODULES[spec].VARIANTS.values():
        first, second = _copies(inputs), _copies(inputs)
        assert fn(*first, block_size=nb) == 0
        assert fn(*second, block_size=nb) == 0
        assert all(a.tobytes() == b.tobytes() for a, b in zip(first, second))
        assert not all(a.tobytes() == b.tobytes() for a, b in zip(first, inputs))   # it did compute


@settings(max_examples=40, deadline=None, derandomize=True)
@given(spec=st.sampled_from(sorted(MODULES)), n=st.integers(1, 140), nb=st.integers(1, 90),
       seed=st.integers(0, 2 ** 16))
def test_default_kernels_match_reference_at_drawn_sizes(spec, n, nb, seed):
    inputs, check = CASES[spec](np.random.default_rng(seed), n)
    assert MODULES[spec].DEFAULT(*inputs, block_size=nb) == 0
    err, tol = check(inputs)
    assert err <= tol, (spec, n, nb, err, tol)


def test_candidates_fit_the_dimension():
    assert tune.candidates(1) == (1,)
    assert tune.candidates(40) == (8, 16, 24, 32)
    assert max(tune.candidates(100)) == 96
    assert set(tune.candidates(4096)) == {64, 128, 192, 256}


def test_block_size_is_timed_once_then_cached(tmp_path):
    calls = []

    def kernel(x, *, block_size):
        calls.append(block_size)
        return 0

    got = tune.block_size(kernel, "fake.fake_v1", 100, lambda: [np.zeros(1)], reps=2, cache_dir=tmp_path)
    assert got in tune.candidates(100)
    assert sorted(set(calls)) == sorted(tune.candidates(100))
    assert len(calls) == 1 + 2 * len(tune.candidates(100))      # warm-up + interleaved repetitions
    from flamefuse.store import payload
    data = json.loads(payload(tune.cache_file(tmp_path)))
    assert data[tune.machine_key()]["fake.fake_v1|100"] == got
    calls.clear()
    assert tune.block_size(kernel, "fake.fake_v1", 100, lambda: [np.zeros(1)], cache_dir=tmp_path) == got
    assert calls == []


def test_cache_dir_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    assert tune.cache_file() == tmp_path / "codegen" / "blocksize.json"


@pytest.mark.parametrize("spec", sorted(p.stem for p in (ROOT / "generated").glob("*.py")))
def test_default_block_size_follows_the_committed_table(spec):
    """block_size=None picks the tuned block size of the measured n nearest in log scale."""
    from flamefuse.codegen import block_sizes
    table = tune.table_for(spec)
    assert table == block_sizes.TABLE[spec]           # every shipped spec was measured
    mod = load_generated(ROOT / "generated" / f"{spec}.py")
    for n, nb, serial in table:                       # at a measured n: that n's block size and threading
        assert mod.block_size_for(n) == nb == tune.pick(table, n) and tune.serial(table, n) == serial
    for n in (1, 2, 45, 46, 90, 91, 300, 1500, 3000, 10 ** 6):
        assert mod.block_size_for(n) == tune.pick(table, n)
        want = min(table, key=lambda row: (abs(np.log(n / row[0])), row[0]))
        assert mod.block_size_for(n) == want[1] and tune.serial(table, n) == want[2], n


def test_steps_split_at_geometric_means():
    assert tune.steps(((32, 8, 1), (128, 16, 1), (512, 64, 0))) == ((64, 8, 1), (256, 16, 1), (2 ** 62, 64, 0))
    table = ((32, 8, 1), (128, 16, 0))
    assert tune.pick(table, 64) == 8 and tune.pick(table, 65) == 16
    assert tune.serial(table, 64) == 1 and tune.serial(table, 65) == 0


def test_serial_rows_switch_the_blas_to_one_thread_only_while_the_kernel_runs():
    mod = MODULES["spd_inverse"]
    if mod._SET_THREADS is None:
        pytest.skip("no openblas_set_num_threads_local in the OpenBLAS SciPy loaded")
    seen = []
    saved = mod._SET_THREADS
    mod._SET_THREADS = lambda k: (seen.append(k), saved(k))[1]
    try:
        for n, nb, serial in tune.table_for("spd_inverse")[:4]:
            seen.clear()
            a = np.asfortranarray(np.eye(n) * 4.0)
            assert mod.DEFAULT(a) == 0 and np.allclose(np.diag(a), 0.25)
            assert (seen[0] == 1 and len(seen) == 2) if serial else seen == [], (n, seen)
    finally:
        mod._SET_THREADS = saved
