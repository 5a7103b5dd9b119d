"""Segments with boolean masks start like every other fused kernel (#29): their clustering plans
are kept in the plan cache (a warm run imports no OR-Tools) and their filter loops are native
libraries (a warm run imports no Numba); results stay NumPy's, bit for bit."""
import io
import os
import pickle
import subprocess
import sys

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.runtime import filters, native, plan_cache
from flamefuse.runtime.filter_native import FilterCode
from flamefuse.runtime.filter_plain import plan_of, record

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """\
import sys
import numpy as np
rng = np.random.default_rng(0)
x, y = rng.random(40000), rng.random(40000)
z = np.zeros(40000)
tops = []
for i in range(4):
    m = (x > 0.2 * i) & (y < 0.9)
    v = x[m] * 3.0 + y[m]
    tops += [float(v.max()), float(v.min()), int(v.size)]
    z[m] = z[m] * 0.5 + y[m]
np.save(sys.argv[1], np.concatenate([z, tops]))
print('numba' in sys.modules, 'ortools' in sys.modules)
"""


def _numpy_result():
    namespace = {}
    exec(SCRIPT.replace("np.save(sys.argv[1], ", "out = (").replace("print(", "(", 1), namespace)
    return namespace["out"]


def test_a_warm_run_of_a_mask_script_imports_neither_ortools_nor_numba(tmp_path):
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", "--wait",
                            "--eager-below", "0", str(script), str(tmp_path / f"out{k}.npy")],
                           env=env, capture_output=True, text=True, timeout=900) for k in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    want = _numpy_result()
    for k in range(2):
        numpy.testing.assert_array_equal(numpy.load(tmp_path / f"out{k}.npy"), want)
    assert runs[0].stdout.split() == ["True", "True"], "the cold run did not cluster with CP-SAT"
    assert runs[1].stdout.split() == ["False", "False"], runs[1].stdout


@pytest.fixture
def filter_libraries(libraries, monkeypatch):
    monkeypatch.setattr(filters, "_KERNELS", {})
    monkeypatch.setattr(filters, "_NATIVE", set())
    lazy.configure(partitioner="greedy", eager_below=0)
    return libraries


@pytest.mark.parametrize("n", [70001, 5])
def test_a_filter_library_gives_the_numba_kernels_bits(filter_libraries, n):
    """A loop with a float sum and a mean over a selection (the levels and, at 70001, the
    parallel partials: the caller's buffers in a library) gives the Numba kernel's bits."""
    rng = numpy.random.default_rng(3)
    x = rng.random(n) - 0.3

    def once():
        filters._KERNELS.clear()
        native._LOADED.clear()
        lazy.flush()
        a = lazy.asarray(x)
        m = a > 0.1
        out = [numpy.array((a[m] * 2.5).sum()), numpy.array((a[m] + 1.0).mean()),
               numpy.array(a[m].max()), numpy.array(a[m] * 3.0)]
        lazy.flush()
        return out
    first = once()
    assert any(isinstance(code, FilterCode) for code, _ in native._WANTED)
    assert lazy.build_native() >= 1
    loops = filters.STATS["native_loops"]
    second = once()
    assert filters.STATS["native_loops"] > loops, "no filter loop ran as a library"
    for a, b in zip(first, second):
        numpy.testing.assert_array_equal(a, b)
    numpy.testing.assert_array_equal(second[3], x[x > 0.1] * 3.0)
    assert second[2] == x[x > 0.1].max()


def test_a_plan_record_is_plain_and_gives_the_plan_back():
    plans = list(filters._PLANS.values())
    if not plans:
        a = lazy.asarray(numpy.arange(50000.0))
        numpy.array(a[a > 7.0] * 2.0)
        plans = list(filters._PLANS.values())
    assert plans, "no segment was clustered"
    for plan in plans:
        data = pickle.dumps(record(plan))
        assert plan_of(plan_cache._PlainUnpickler(io.BytesIO(data)).load()) == plan   # plain values only
    assert plan_of(("filters-0", (), (), 0)) is None and plan_of((1, 2)) is None


def test_a_parallel_filter_loop_gives_numbas_bits_under_any_thread_count(tmp_path):
    """A chunked loop (a float sum and count over a selection of 70001 elements) run by Numba's
    prange in the cold run and by the library on teams of 3 and 1 threads: one result."""
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script = tmp_path / "script.py"
    script.write_text("import sys\nimport numpy as np\nx = np.random.default_rng(3).random(70001) - 0.3\n"
                      "m = x > 0.1\ns, k = (x[m] * 2.5).sum(), x[m].size\n"
                      "print(repr(float(s)), k, 'numba' in sys.modules)\n")
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=ROOT)
    outs = []
    for threads in ("2", "3", "1"):
        r = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", "--wait",
                            "--eager-below", "0", str(script)], env=dict(env, NUMBA_NUM_THREADS=threads),
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    x = numpy.random.default_rng(3).random(70001) - 0.3
    assert outs[0][:2] == outs[1][:2] == outs[2][:2]
    assert int(outs[0][1]) == int((x > 0.1).sum())
    assert float(outs[0][0]) == pytest.approx(float((x[x > 0.1] * 2.5).sum()), rel=1e-13)
    assert outs[0][2] == "True" and outs[1][2] == outs[2][2] == "False"


def test_random_mask_programs_agree_with_numpy_through_the_libraries(filter_libraries):
    """test_filters' random mask programs, compiled: through Numba (wanting libraries), then
    through the built libraries, each agreeing with NumPy (and the second loading some)."""
    from hypothesis import HealthCheck, given, settings
    from test_filters import check, filter_programs

    @settings(max_examples=12, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(filter_programs)
    def inner(spec):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            for _ in range(2):
                filters._KERNELS.clear()
                native._LOADED.clear()
                lazy.flush()
                check(spec)
                native.build_wanted()
    loops = filters.STATS["native_loops"]
    inner()
    assert filters.STATS["native_loops"] > loops, "no filter loop ran as a library"
