"""benchmarks/corpus: every program imports, runs at a tiny size, and is deterministic; the
bench's result comparison tells identical, close and different results apart.

Plain NumPy only (``flamefuse bench corpus`` runs the programs under ``flamefuse fuse``; that
takes minutes, so it is a benchmark, not a test).
"""
import math

import numpy as np
import pytest

from flamefuse.cli.bench import BENCH_DIR
from flamefuse.files import import_file

corpus = import_file(BENCH_DIR / "corpus.py", "flamefuse_bench_corpus")


def test_every_program_file_is_listed_and_has_a_source_header():
    files = {p.stem for p in corpus.HERE.glob("*.py")}
    assert files == set(corpus.PROGRAMS)
    assert len(files) >= 30
    for name in files:
        head = (corpus.HERE / f"{name}.py").read_text().split('"""')[1]
        assert "Source:" in head, name


def _run(module, n):
    result = module.kernel(*module.initialize(n))
    assert isinstance(result, tuple) and result
    return [np.asarray(r) for r in result]


@pytest.mark.parametrize("name", sorted(corpus.PROGRAMS))
def test_program_is_deterministic_at_a_tiny_size(name):
    module = import_file(corpus.HERE / f"{name}.py", f"corpus_{name}")
    tiny = corpus.PROGRAMS[name][1]
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        first, second = _run(module, tiny), _run(module, tiny)
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)
        if a.dtype.kind in "fc":
            assert np.all(np.isfinite(a))


def test_compare_bitwise_close_and_mismatch(tmp_path):
    a = np.linspace(1.0, 2.0, 7)
    np.savez(tmp_path / "a.npz", a, np.arange(3))
    np.savez(tmp_path / "same.npz", a.copy(), np.arange(3))
    np.savez(tmp_path / "close.npz", a * (1 + 1e-14), np.arange(3))
    np.savez(tmp_path / "far.npz", a * (1 + 1e-6), np.arange(3))
    np.savez(tmp_path / "int.npz", a, np.arange(3) + 1)
    np.savez(tmp_path / "fewer.npz", a)
    cmp = lambda other, rtol=1e-12: corpus.compare(str(tmp_path / "a.npz"), str(tmp_path / other), rtol)
    assert cmp("same.npz") == ("bitwise", 0.0)
    status, worst = cmp("close.npz")
    assert status == "close" and 0 < worst < 1e-13
    assert cmp("far.npz")[0] == "MISMATCH"
    assert cmp("far.npz", rtol=1e-5)[0] == "close"
    assert cmp("int.npz") == ("MISMATCH", math.inf)
    assert cmp("fewer.npz") == ("MISMATCH", math.inf)


def test_the_scratch_folder_is_in_ram_where_there_is_one():
    """The programs' results (up to 72 MB each) are written into RAM: on a disk, their
    write-back moved the next runs' process times by 20-50 ms (go_fast's 0.87x)."""
    import os
    with corpus.scratch() as tmp:
        assert os.path.isdir(tmp)
        if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
            assert os.path.dirname(tmp) == "/dev/shm"
