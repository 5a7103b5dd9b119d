"""Native kernel libraries (Numba-compiled, cc-linked, ctypes-loaded) give the same results as
the Numba kernels they are built from, and a warm ``flamefuse fuse`` run needs no Numba."""
import os
import re
import subprocess
import sys

import numpy
import pytest
from hypothesis import HealthCheck, given, settings

import flamefuse.lazy as lazy
from flamefuse import sigcodes
from flamefuse.runtime import execute, native
from runtime_programs import check, programs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fresh():
    lazy.flush()
    execute._PLANS.clear()
    native._LOADED.clear()


def through_both(program):
    """``program(lazy)``'s arrays through Numba (wanting libraries), then through the built
    libraries; asserts the second run loaded some."""
    _fresh()
    first = [numpy.array(x) for x in program(lazy)]
    assert native._WANTED, "the Numba run wanted no native library"
    assert lazy.build_native() >= 1
    _fresh()
    before = execute.STATS["native_loads"]
    second = [numpy.array(x) for x in program(lazy)]
    assert execute.STATS["native_loads"] > before
    return first, second


def same(first, second, want):
    for a, b, w in zip(first, second, want):
        assert a.dtype == b.dtype == w.dtype
        numpy.testing.assert_array_equal(a, b)        # one source, one compiler: bitwise
        eps = numpy.finfo(w.dtype).eps if w.dtype.kind == "f" else 0
        numpy.testing.assert_allclose(b, w, rtol=8 * eps)    # libm's cos is not NumPy's


def test_parallel_stencil_reduction_and_roll_match_numba_and_numpy(libraries):
    rng = numpy.random.default_rng(3)
    g, x, y = rng.random((301, 257)), rng.random(200_003), rng.random(200_003)

    def program(np):
        grid = np.asarray(g.copy())
        c = grid[1:-1, 1:-1]
        c[:] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])
        inside = (np.asarray(x) ** 2 + np.asarray(y) ** 2 < 0.5).sum()
        total = (np.asarray(x) * 3.0 - 1.0).sum()
        rows = (grid * 2.0).sum(axis=1)
        rolled = np.roll(grid, 1, 1) + np.roll(grid, -2, 0)
        return grid, inside, total, rows, rolled
    first, second = through_both(program)
    same(first, second, [numpy.asarray(v) for v in program(numpy)])


def test_narrow_integers_float32_and_remainders(libraries):
    a8 = numpy.arange(-60, 60, dtype=numpy.int8).repeat(300)
    f4 = numpy.linspace(-2, 2, 40_000, dtype=numpy.float32)
    special = [0.0, -0.0, numpy.inf, -numpy.inf, numpy.nan, 1e300, -1e-300, 5e-324, 7.0, -7.5]
    x = numpy.concatenate([special, numpy.random.default_rng(4).standard_normal(40_000) * 1e9])
    y = numpy.resize(numpy.array([2.0, -3.0, 0.0, numpy.inf, 1e-300, 0.1]), x.size)

    def program(np):       # the library's own fmod (x87 fprem), exact like libm's and Numba's
        lx, ly = np.asarray(x), np.asarray(y)
        return ((np.asarray(a8) * 3).max(), np.cos(np.asarray(f4)) * np.float32(2) + 1,
                lx % 2.0, lx % ly, np.fmod(lx, ly), np.asarray(f4 * 1e5) % np.float32(0.3))
    first, second = through_both(program)
    same(first, second, [numpy.asarray(v) for v in program(numpy)])


def test_complex_arrays_match_numba_and_numpy(libraries):
    """Complex arrays are pointers too (#29: Mandelbrot's ``abs(Z) < 2``, ``Z * Z + C`` load no
    Numba on a warm run); a kernel that needs Numba's helper library is not built and stays with
    Numba."""
    rng = numpy.random.default_rng(6)
    z = rng.standard_normal(50_000) + 1j * rng.standard_normal(50_000)
    c = (rng.standard_normal(50_000) + 1j * rng.standard_normal(50_000)).astype(numpy.complex64)
    z[:4] = [0, -0.0, 1e-300, 3 + 4j]     # finite: the fused product of an overflowing complex
                                          # differs from NumPy's with Numba alone (not the library's)

    def program(np):
        lz, lc = np.asarray(z), np.asarray(c)
        return (np.abs(lz) < 2.0, lz * lz + lc, (lz * 2.0 - lc).sum(), np.abs(lc * lc) + 1.0,
                lz / (lc + 1.0))
    first, second = through_both(program)
    want = [numpy.asarray(v) for v in program(numpy)]
    for a, b, w in zip(first, second, want):
        assert a.dtype == b.dtype == w.dtype
        numpy.testing.assert_array_equal(a, b)        # one source, one compiler: bitwise
        numpy.testing.assert_allclose(b, w, rtol=1e-5)


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(programs)
def test_random_programs_agree_with_numpy_through_the_libraries(libraries, spec):
    _fresh()
    check(spec)                         # Numba kernels, wanting their libraries
    native.build_wanted()
    _fresh()
    check(spec)                         # the libraries (or Numba where none could be built)


def test_signatures_and_what_stays_with_numba():
    a = numpy.zeros((3, 4))
    assert sigcodes.signature((a, numpy.uint64(2), numpy.float32(1))) == ("<f8:2w", "Q", "f")
    assert sigcodes.signature((a[:, ::2],)) is None                       # not contiguous
    assert sigcodes.signature((numpy.complex128(1j),)) is None            # no C-ABI scalar here
    assert sigcodes.signature((numpy.zeros(3, complex),)) == ("<c16:1w",)  # an array: a pointer


def test_a_module_calling_numba_helpers_is_not_linked():
    import llvmlite.binding as ll
    ll.initialize_native_target()
    mod = ll.parse_assembly("declare double @numba_gamma(double)\ndeclare double @cos(double)\n"
                            "declare void @numba_gil_ensure(i32*)\n"
                            "declare double @llvm.sqrt.f64(double)\n")
    assert native._unresolved(mod) == ["numba_gamma"]


def test_one_kernel_value_rendered_as_numba_module_and_native_entry():
    """#31 item 3: the kernel is a value (Code) rendered by two renderers; neither reads text."""
    from flamefuse.runtime.code import Code, native_entry
    code = Code(("n0", "a1", "a2"), True, "n0", 256, (("part3", "float64", 1), ("acc3_lv", "float64", 48)),
                ("acc3 = np.float64(0)", "for i0 in range(lo, hi):", "    acc3 = (acc3 + a1[i0])",
                 "part3[ch] = acc3"),
                ("acc3 = np.float64(0)", "for ch in range(NCH):", "    acc3 = (acc3 + part3[ch])",
                 "a2[0] = acc3"))
    src = code.source
    assert "@njit(parallel=True, cache=True, error_model='numpy')\ndef kernel(n0, a1, a2):\n" in src
    assert "    part3 = np.empty(NCH, dtype=np.float64)\n" in src
    assert "    acc3_lv = np.empty(NCH * np.uint64(48), dtype=np.float64)\n" in src
    assert "    for ch in prange(NCH):\n        lo = np.uint64(ch) * CH\n" in src
    assert src.endswith("        part3[ch] = acc3\n    acc3 = np.float64(0)\n    for ch in range(NCH):\n"
                        "        acc3 = (acc3 + part3[ch])\n    a2[0] = acc3\n")
    text = native_entry(code, ("Q", "<f8:1r", "<f8:1w"))
    assert "def entry(CLO, CHI, NW, FIN, n0, a1_p, a1_d0, a2_p, a2_d0, part3_p, acc3_lv_p):" in text
    assert "    part3 = carray(part3_p, (NCH * np.uint64(1),))" in text
    assert "    acc3_lv = carray(acc3_lv_p, (NCH * np.uint64(48),))" in text
    assert "    for ch in range(CLO * NCH // NW, CHI * NCH // NW):" in text    # workers' shares
    assert "    if FIN != 0:\n        acc3 = np.float64(0)\n        for ch in range(NCH):" in text
    assert "prange" not in text and "njit" not in text
    assert native.layout(code) == "1 256 float64:1 float64:48"       # kept in the library
    assert native._read_layout(native.layout(code)) == (True, 256, [("float64", 1), ("float64", 48)])
    assert Code.of(code.plain()) == code and Code.of(code.plain()).source == src
    ns = {}                                     # the module runs as plain Python too
    exec(src.replace("@njit(parallel=True, cache=True, error_model='numpy')", ""), ns)
    out, x = numpy.zeros(1), numpy.arange(1000.0)
    ns["kernel"](numpy.uint64(1000), x, out)
    assert out[0] == x.sum()


def test_a_warm_fuse_run_loads_libraries_and_never_imports_numba(tmp_path):
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script = tmp_path / "script.py"
    script.write_text("import sys\nimport numpy as np\nx = np.arange(50000.0)\n"
                      "y = np.sqrt(x * 2.0 + 1.0)\nprint(float(y.sum()), 'numba' in sys.modules)\n")
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)], env=env,
                           capture_output=True, text=True, timeout=600) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    want = float(numpy.sqrt(numpy.arange(50000.0) * 2.0 + 1.0).sum())
    (total, numba_loaded), second = runs[0].stdout.split(), runs[1].stdout.split()
    assert float(total) == pytest.approx(want, rel=1e-13) and numba_loaded == "True"
    assert "native kernels for the next run" in runs[0].stderr
    assert second == [total, "False"], runs[1].stderr
    assert re.search(r"native libraries loaded 1 \([0-9.]+ ms each\), used by 1 kernel calls",
                     runs[1].stderr), runs[1].stderr


def test_a_damaged_library_is_removed_so_it_is_built_again(libraries):
    src, sig = "def kernel(a0):\n    pass\n", ("<f8:1w",)
    lib = libraries / f"{native._digest(src, sig)}.so"
    lib.write_bytes(b"not a shared library")
    assert native.find(src, sig) is None and not lib.exists()


def test_the_chunk_team_waits_for_every_worker_even_when_interrupted():
    import threading
    import time
    team, done = native._Team(2), threading.Event()

    def chunk(lo, hi, nw, fin):
        if lo == 0:
            raise KeyboardInterrupt
        time.sleep(0.2)
        done.set()
    with pytest.raises(KeyboardInterrupt):
        team.run(chunk, ())
    assert done.is_set()                       # the worker finished before run returned
    seen = []
    team.run(lambda lo, hi, nw, fin: seen.append((lo, hi, nw, fin)), ())
    assert sorted(seen) == [(0, 1, 2, 0), (1, 2, 2, 0)]      # and the team still works


def test_a_truncated_library_is_rebuilt_not_loaded(tmp_path):
    """Issue 26 item 7: ``head -c 4096 X.so > X.so`` made every later run die of a bus error in
    dlopen; the library is now checked (size, digest recorded at build time) and built again."""
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script = tmp_path / "script.py"
    script.write_text("import numpy as np\nx = np.arange(60000.0)\nprint(float(np.sqrt(x * 3.0 + 2.0).sum()))\n")
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=ROOT)
    fuse = lambda: subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", str(script)], env=env,
                                  capture_output=True, text=True, timeout=600)
    first = fuse()
    assert first.returncode == 0, first.stderr
    libs = sorted((tmp_path / "cache" / "native").glob("*.so"))
    assert libs, first.stderr[-3000:]
    whole = {lib: lib.read_bytes() for lib in libs}
    for lib in libs:
        lib.write_bytes(whole[lib][:4096])
    want = float(numpy.sqrt(numpy.arange(60000.0) * 3.0 + 2.0).sum())
    for _ in range(2):                     # the damaged run, then the run with the rebuilt library
        done = fuse()
        assert done.returncode == 0, done.stderr[-3000:]
        assert float(done.stdout.split()[0]) == pytest.approx(want, rel=1e-13)
    assert all(lib.stat().st_size == len(whole[lib]) for lib in libs)
    assert "native libraries loaded 1" in done.stderr, done.stderr


def test_native_kernels_give_numpys_floating_point_warnings(libraries):
    """A library's kernel, serial and on the chunk team's threads, raises the floating-point
    flags NumPy's loops raise; the flush reads them (each worker's own: flags are per thread)
    and gives NumPy's RuntimeWarnings, in order (an integer division by zero too, which raises
    no flag by itself)."""
    import warnings
    from flamefuse.lazy import fpstate
    from flamefuse.runtime import fpflags
    if not fpflags.AVAILABLE:
        pytest.skip("no fetestexcept in this C library")

    def program(np, w, n):
        x = np.linspace(1.0, 2.0, n) * 1.0      # the flags' elements in the last share only
        x[-3] = 0.0
        x[-5] = -1.0
        k, d = np.arange(n) + 7, np.arange(n) + 1
        d[-4] = 0
        big = np.full(n, 1.0) * 1.0
        big[-2] = 1e300
        with w.catch_warnings(record=True) as ws:
            w.simplefilter("always")
            r = 1.0 / x + np.sqrt(x)
            s = (big * 1e10).sum()
        with w.catch_warnings(record=True) as ints:
            w.simplefilter("always")
            q = k // d
        with w.catch_warnings(record=True) as quiet:
            w.simplefilter("always")
            ok = (x * x + 1.0).sum()
        return [[str(m.message) for m in c] for c in (ws, ints, quiet)], r, q, s, ok

    for n in (301, 200_003):          # a serial kernel; a parallel one (its shares on the team)
        want = program(numpy, warnings, n)
        assert want[0][0] and want[0][1] and not want[0][2]
        through_both(lambda np: program(np, fpstate.warnings_module(), n)[1:])
        got = program(lazy, fpstate.warnings_module(), n)
        assert execute.STATS["native_loads"] > 0
        assert got[0] == want[0], n
        numpy.testing.assert_array_equal(numpy.asarray(got[2]), want[2])


def test_a_child_forked_after_a_parallel_library_loaded_runs_it(tmp_path):
    """A parallel kernel's launcher finds the calling process's team at each call: a child forked
    after the library was loaded (``multiprocessing``'s fork) used to wait forever for its
    parent's worker threads."""
    if native._cc() is None or not hasattr(os, "fork"):
        pytest.skip("no C compiler (cc) on PATH, or no fork")
    script = tmp_path / "forks.py"
    script.write_text(
        "import os, sys\nimport numpy\nimport flamefuse.lazy as lazy\nlazy.configure(eager_below=0)\n"
        "x = numpy.random.default_rng(3).random(200_003)\n"
        "def go():\n    return float(numpy.array(lazy.asarray(x) * 2.0 + 1.0).sum())\n"
        "first = go()\nif sys.argv[1] == 'build':\n    lazy.build_native()\n    sys.exit(0)\n"
        "r, w = os.pipe()\npid = os.fork()\n"
        "if pid == 0:\n    import signal\n    signal.alarm(120)\n"      # a child that hangs dies
        "    os.write(w, repr(go()).encode())\n    os._exit(0)\n"
        "os.waitpid(pid, 0)\nprint(repr(first), os.read(r, 100).decode(), lazy.stats().get('native_loads', 0))\n")
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_COMPILE="inline", NUMBA_NUM_THREADS="2", PYTHONPATH=ROOT)
    for step in ("build", "fork"):
        r = subprocess.run([sys.executable, str(script), step], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    parent, child, loads = r.stdout.split()
    assert int(loads) >= 1, "the library was not used"
    assert parent == child
    x = numpy.random.default_rng(3).random(200_003)
    assert float(child) == pytest.approx(float((x * 2.0 + 1.0).sum()), rel=1e-13)


def test_warnings_of_numba_prange_kernels_and_libraries_are_numpys(libraries):
    """NumPy's floating-point warnings from fused kernels on Numba's ``prange`` threads: their
    flags were never read, so a kernel with no native library yet (the first run), or with none
    possible (a complex scalar argument: every warm run), gave no warning at all."""
    import warnings
    rng = numpy.random.default_rng(8)
    n = 60_000
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    x[:3] = [1e300, -1e300, 5.0]

    def program(np):
        a, b = np.asarray(x), np.asarray(y)
        c = a * b + a ** 2 - 3 * a
        c = np.asarray(numpy.array(c))               # its own flush (a library next time)
        z = a.astype(numpy.complex64) * b.astype(numpy.complex64) * 2    # Numba's, always
        return c, z

    def warned(np):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            out = [numpy.array(v) for v in program(np)]
            lazy.flush()
        return out, sorted({str(w.message) for w in ws if w.category is RuntimeWarning})

    want, want_texts = warned(numpy)
    assert want_texts
    _fresh()
    first, first_texts = warned(lazy)            # Numba's kernels (wanting their libraries)
    assert lazy.build_native() >= 1
    _fresh()
    before = execute.STATS["native_loads"]
    second, second_texts = warned(lazy)          # the libraries (Numba where none is possible)
    assert execute.STATS["native_loads"] > before
    assert first_texts == want_texts and second_texts == want_texts
    for a, b, w in zip(first, second, want):
        numpy.testing.assert_array_equal(a, w)
        numpy.testing.assert_array_equal(b, w)


def test_a_narrow_float_scalar_out_of_range_warns_once_on_a_warm_run(tmp_path):
    """``f32 + 1e40`` on a warm ``flamefuse fuse`` run (its kernel a native library, taking the
    scalar as float32): the argument's conversion gave NumPy's cast warning at flamefuse's own
    line, then the flush gave NumPy's again at the script's."""
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script = tmp_path / "script.py"
    script.write_text("import numpy as np\nf = np.linspace(0, 1, 7, dtype=np.float32)\n"
                      "r = f + 1e40\nprint(r.tolist())\n")
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_PLAN_CACHE="1", FLAMEFUSE_EAGER_BELOW="0",
               PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", str(script)],
                           env=env, capture_output=True, text=True, timeout=600) for _ in range(2)]
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    assert re.search(r"native libraries loaded 1 ", runs[1].stderr), runs[1].stderr
    for r in runs:
        assert r.stdout == plain.stdout
        warned = [line for line in r.stderr.splitlines() if "Warning" in line]
        assert len(warned) == 1, r.stderr        # (at the line that made the flush run)
        assert re.fullmatch(re.escape(str(script)) + r":\d+: RuntimeWarning: overflow encountered in cast",
                            warned[0]), r.stderr
