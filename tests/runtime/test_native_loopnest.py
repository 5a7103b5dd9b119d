"""Product groups' loop nests as native libraries (#29: every kind of fused kernel starts as fast as
a native library does; a warm run imports no Numba): the library gives the Numba kernel's bits,
and a warm ``flamefuse fuse`` of ``y = (A @ x) @ A`` imports neither Numba nor OR-Tools."""
import os
import subprocess
import sys

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.loopnest.nestcode import NestCode, Root, layout, native_entry
from flamefuse.runtime import execute, linalg, native

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _products(np, A, x, r, u):
    y = (A @ x) @ A                 # matvec, then vecmat of the same matrix: one pass
    q, s = A @ u, A.T @ r           # BiCG's pair
    return y, q, s


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_product_group_library_gives_the_numba_kernels_bits(libraries, dtype):
    rng = numpy.random.default_rng(5)
    A, x = rng.random((300, 170)).astype(dtype), rng.random(170).astype(dtype)
    r, u = rng.random(300).astype(dtype), rng.random(170).astype(dtype)

    def once():
        linalg._KERNELS.clear()
        native._LOADED.clear()
        lazy.flush()
        return [numpy.array(v) for v in _products(lazy, *map(lazy.asarray, (A, x, r, u)))]
    groups = lazy.stats().get("loopnest_groups", 0)
    first = once()                                   # Numba's kernels, wanting libraries
    assert lazy.stats()["loopnest_groups"] > groups, "the products did not run as loop nests"
    assert any(isinstance(code, NestCode) for code, _ in native._WANTED)
    assert lazy.build_native() >= 1
    loads = execute.STATS["native_loads"]
    second = once()                                  # the libraries
    assert execute.STATS["native_loads"] > loads
    want = _products(numpy, A.astype("float64"), x, r, u)
    for a, b, w in zip(first, second, want):
        assert a.dtype == b.dtype == numpy.dtype(dtype)
        numpy.testing.assert_array_equal(a, b)       # one code, one compiler: bitwise
        numpy.testing.assert_allclose(b, w, rtol=1e-4 if dtype == "float32" else 1e-12)


def test_a_nest_is_one_value_rendered_twice():
    root = Root(0, True, "n0", (("t3", "+", "float64", "0.0"),),
                ("    for i0 in range(_lo, _hi):", "        _p_t3[_t, i0] = _p_t3[_t, i0] + a0[i0]"))
    code = NestCode(("S0",), ("a0", "t3", "n0"), True, True, (root,))
    assert NestCode.of(code.plain()) == code
    src = code.source
    assert "@njit(cache=True, parallel=True, fastmath={'reassoc', 'contract', 'nsz'})" in src
    assert "    _p_t3 = np.full((_nt,) + t3.shape, 0.0, dtype=np.float64)" in src
    assert "    for _t in prange(_nt):" in src
    entry = native_entry(code, ("<f8:1r", "<f8:1w", "q"))
    assert "def entry(CLO, CHI, NW, FIN, ROOT, a0_p, a0_d0, t3_p, t3_d0, n0, _p_t3_p):" in entry
    assert "inline='always', error_model='numpy'" in entry and "prange" not in entry
    assert "        for _t in range(CLO * _nt // NW, CHI * _nt // NW):" in entry and "np.full" not in entry
    assert "    _nt = max(1, min(32, n0))" in src and "_nt = max(1, min(32, n0))" in entry
    assert layout(code) == '{"nest": [[true, [[1, "float64", 0.0]]]]}'


def test_a_warm_run_of_a_product_group_imports_neither_numba_nor_ortools(tmp_path):
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")
    script = tmp_path / "script.py"
    # A past 2 MiB: products of computed operands and a smaller matrix are NumPy's at once
    script.write_text("import sys\nimport numpy as np\nrng = np.random.default_rng(0)\n"
                      "A, x = rng.random((600, 500)), rng.random(500)\n"
                      "y = (A @ x) @ A\nprint(repr(float(y[7])), 'numba' in sys.modules, "
                      "'ortools' in sys.modules)\n")
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_PLAN_CACHE="1", PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", str(script)],
                           env=env, capture_output=True, text=True, timeout=900) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    rng = numpy.random.default_rng(0)
    A, x = rng.random((600, 500)), rng.random(500)
    (cold, numba_cold, _), warm = runs[0].stdout.split(), runs[1].stdout.split()
    assert float(cold) == pytest.approx(float(((A @ x) @ A)[7]), rel=1e-12) and numba_cold == "True"
    assert "product groups 1 with 2 products (0 NumPy calls" in runs[1].stderr
    assert warm == [cold, "False", "False"], runs[1].stderr      # the same bits, no Numba
    env["FLAMEFUSE_PLAN_CACHE"] = "0"         # code generated again (OR-Tools), the library kept
    again = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", str(script)],
                           env=env, capture_output=True, text=True, timeout=900)
    assert again.stdout.split() == [cold, "False", "True"], again.stderr
