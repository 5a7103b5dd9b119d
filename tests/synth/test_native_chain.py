"""Synthesized linear-algebra chain kernels as native libraries (#29: every kind of fused kernel
starts as fast as a native library does; a warm run imports no Numba).

The library of a chain kernel gives the Numba kernel's bits for the same inputs in all four
precisions (it is the same compiled function, called through a C entry with the same work
arrays and routine table), its routine table is the one Numba's look-up gives, and a warm
``flamefuse fuse`` of a Cholesky / inverse / product chain imports no Numba and gives NumPy's
numbers, whether the cold run compiled inline or in the background.
"""
import json
import os
import subprocess
import sys

import numpy
import pytest

from flamefuse.runtime import native
from flamefuse.synth import native_chain

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = ["float32", "float64", "complex64", "complex128"]


def _needs_cc():
    if native._cc() is None:
        pytest.skip("no C compiler (cc) on PATH: native kernel libraries are not built")


def _module(stem):
    """A generated module kept in the user cache's ``synth`` folder, as a chain's module is."""
    from flamefuse.cache import load_module
    text = open(os.path.join(ROOT, "generated", f"{stem}.py")).read()
    name = f"flamefuse_synth_test_{stem}"
    module, _ = load_module("synth", name, text)
    return module, native_chain.ChainCode(name, module.DEFAULT_NAME, text)


def _inputs(stem, dtype, n=150):
    rng = numpy.random.default_rng(11)
    x = rng.standard_normal((n, n))
    if numpy.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal((n, n))
    if stem == "spd_inverse":           # Hermitian positive definite
        a = x @ x.conj().T + n * numpy.eye(n)
    else:                               # general: the LU pivots
        a = x + numpy.diag(numpy.arange(n) % 7 - 3.0)
    return numpy.asfortranarray(a.astype(dtype))


@pytest.mark.parametrize("stem", ["spd_inverse", "general_inverse"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_chain_library_gives_the_numba_kernels_bits(monkeypatch, tmp_path, stem, dtype):
    _needs_cc()
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setattr(native, "_folder", lambda: tmp_path)
    monkeypatch.setattr(native, "_LOADED", {})
    module, code = _module(stem)
    a = _inputs(stem, dtype)
    pivoted = stem == "general_inverse"
    piv = numpy.empty(a.shape[0], numpy.int32) if pivoted else None
    sig = native_chain.signature((a,), piv)
    assert sig is not None and native.build(code, sig, tmp_path), "the chain kernel was not built"
    launch = native.find(code.source, sig)
    assert launch is not None

    numba_out, native_out = a.copy(order="F"), a.copy(order="F")
    kw = {"piv": numpy.empty_like(piv)} if pivoted else {}
    kw2 = {"piv": numpy.empty_like(piv)} if pivoted else {}
    assert module.DEFAULT(numba_out, **kw) == 0
    assert launch(native_out, **kw2) == 0
    numpy.testing.assert_array_equal(native_out, numba_out)      # the same function: bitwise
    if pivoted:
        numpy.testing.assert_array_equal(kw["piv"], kw2["piv"])
        want = numpy.linalg.inv(a.astype(numpy.complex128 if a.dtype.kind == "c" else numpy.float64))
        got = native_out
    else:                               # the lower triangle holds the inverse
        want = numpy.tril(numpy.linalg.inv(a.astype(numpy.complex128 if a.dtype.kind == "c" else numpy.float64)))
        got = numpy.tril(native_out)
    tol = 1e-3 if a.dtype in (numpy.float32, numpy.complex64) else 1e-10
    numpy.testing.assert_allclose(got, want, rtol=tol, atol=tol * numpy.abs(want).max())


def test_a_singular_matrix_gives_the_numba_kernels_info(monkeypatch, tmp_path):
    _needs_cc()
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setattr(native, "_folder", lambda: tmp_path)
    monkeypatch.setattr(native, "_LOADED", {})
    module, code = _module("spd_inverse")
    a = _inputs("spd_inverse", "float64", 60)
    a[40, 40] = -1e6                    # not positive definite from row 41 on
    sig = native_chain.signature((a,), None)
    assert native.build(code, sig, tmp_path)
    launch = native.find(code.source, sig)
    x, y = a.copy(order="F"), a.copy(order="F")
    info = module.DEFAULT(x)
    assert info > 0 and launch(y) == info
    numpy.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="Fortran-ordered"):        # the same checks, the same words
        launch(numpy.ascontiguousarray(a))


def test_the_routine_table_is_numbas():
    from numba.extending import get_cython_function_address
    from flamefuse.blas_call import _routines
    for char in "fdFD":
        table = native_chain.routine_table(char)
        assert list(table) == [get_cython_function_address(m, s) for m, s in _routines(char)]


SCRIPT = """
import sys
import numpy as np
rng = np.random.default_rng(3)
n = 300
X = rng.standard_normal((n, n))
A = X.T @ X + n * np.eye(n)
L = np.linalg.cholesky(A)
Li = np.linalg.inv(L)
C = Li.T @ Li
np.save(OUT, C)
print(json.dumps(sorted(sys.modules)))
"""


def _fuse(tmp_path, compile_mode, wait=False):
    script, out = tmp_path / "chain.py", tmp_path / "out.npy"
    script.write_text(f"import json\nOUT = {str(out)!r}\n" + SCRIPT)
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_NATIVE="1",
               FLAMEFUSE_PRELOAD="1", FLAMEFUSE_PLAN_CACHE="1", FLAMEFUSE_COMPILE=compile_mode,
               OPENBLAS_NUM_THREADS="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", *(["--wait"] if wait else []),
                        "--explain", str(script)], env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return numpy.load(out), set(json.loads(r.stdout.strip().splitlines()[-1])), r.stderr


@pytest.mark.parametrize("cold", ["inline", "background"])
def test_a_warm_run_of_a_linalg_chain_imports_no_numba(tmp_path, cold):
    _needs_cc()
    _fuse(tmp_path, cold, wait=cold == "background")
    got, modules, err = _fuse(tmp_path, cold)
    assert "trinv as trinv variant" in err and "ltl as ltl variant" in err, err     # fused kernels ran
    assert "numba" not in modules and "llvmlite" not in modules, "a warm run imported Numba"
    rng = numpy.random.default_rng(3)
    X = rng.standard_normal((300, 300))
    L = numpy.linalg.cholesky(X.T @ X + 300 * numpy.eye(300))
    Li = numpy.linalg.inv(L)
    want = Li.T @ Li
    numpy.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * numpy.abs(want).max())


def test_a_damaged_chain_library_is_removed_and_the_numba_kernel_serves(monkeypatch, tmp_path):
    """The chain's library goes through the one trust path (its sidecar's size and SHA-256): a
    damaged one never reaches dlopen, is removed (built again later) and the call is Numba's."""
    _needs_cc()
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setattr(native, "_folder", lambda: tmp_path)
    monkeypatch.setattr(native, "_LOADED", {})
    monkeypatch.setattr(native, "_WANTED", {})
    module, code = _module("spd_inverse")
    a = _inputs("spd_inverse", "float64", 40)
    sig = native_chain.signature((a,), None)
    assert native.build(code, sig, tmp_path)
    (lib,) = tmp_path.glob("*.so")
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0xFF
    lib.write_bytes(bytes(data))
    launch = native_chain.Launch(code)
    x, y = a.copy(order="F"), a.copy(order="F")
    assert launch(x) == 0 and module.DEFAULT(y) == 0
    numpy.testing.assert_array_equal(x, y)
    assert not lib.exists() and (code, sig) in native._WANTED     # removed, and wanted again
