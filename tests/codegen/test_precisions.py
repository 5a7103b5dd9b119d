"""Every generated module in float32, complex64 and complex128 (float64: test_codegen_kernels).

Complex semantics are Hermitian: Cholesky A = L L^H, ltl is L^H L, every transpose of the spec
language a conjugate transpose. Tolerances scale with the precision (200 n eps(dtype) cond).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from flamefuse.codegen import load_generated

sys.path.insert(0, str(Path(__file__).parent))
import codegen_cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODULES = {spec: load_generated(ROOT / "generated" / f"{spec}.py") for spec in codegen_cases.CASES}
SIZES = [(1, 1), (7, 3), (40, 64), (131, 16)]     # n = 1, n not a multiple of nb, nb > n, several blocks


@pytest.fixture
def precision(request):
    saved = codegen_cases.DTYPE
    codegen_cases.DTYPE = np.dtype(request.param)
    yield codegen_cases.DTYPE
    codegen_cases.DTYPE = saved


@pytest.mark.parametrize("precision", ["float32", "complex64", "complex128"], indirect=True)
@pytest.mark.parametrize("spec", sorted(codegen_cases.CASES))
def test_default_kernel_in_every_precision(spec, precision):
    fn = MODULES[spec].DEFAULT
    for n, nb in SIZES:
        rng = np.random.default_rng(1000 * n + nb)
        inputs, check = codegen_cases.CASES[spec](rng, n)
        assert all(a.dtype == precision for a in inputs)
        assert fn(*inputs, block_size=nb) == 0, (n, nb)
        err, tol = check(inputs)
        assert err <= tol, (n, nb, err, tol)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "complex128"])
def test_scipy_style_keeps_the_precision(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 50)) + (1j * rng.standard_normal((50, 50)) if dtype.startswith("c") else 0)
    a = (x @ x.conj().T + 50 * np.eye(50)).astype(dtype)
    inv = MODULES["spd_inverse"].spd_inverse(a)
    assert inv.dtype == dtype
    assert np.allclose(inv, np.linalg.inv(a), rtol=100 * np.finfo(dtype).eps * 50)
    assert np.allclose(inv, inv.conj().T)                              # Hermitian, mirrored with conj
    low = MODULES["cholesky"].cholesky(a)
    assert np.allclose(low @ low.conj().T, a, rtol=1e-4 if dtype in ("float32", "complex64") else 1e-10)


def test_other_dtypes_say_which_work():
    a = np.asfortranarray(np.eye(3, dtype=np.float16))
    with pytest.raises(TypeError, match="float32, float64, complex64, complex128"):
        MODULES["cholesky"].DEFAULT(a)
    with pytest.raises(TypeError, match="one dtype"):
        MODULES["trsm"].DEFAULT(np.asfortranarray(np.eye(3)), np.asfortranarray(np.ones((3, 2), np.float32)))
    with pytest.raises(TypeError, match="LAPACK precision"):
        MODULES["cholesky"].cholesky(np.eye(3, dtype=object))
