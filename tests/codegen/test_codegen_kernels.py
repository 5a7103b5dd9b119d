"""Generated kernels (the committed generated/ modules) against NumPy/SciPy references.

The modules are imported once per session; their kernels compile on first
call and are cached by Numba (cache=True) in generated/__pycache__.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg.lapack as lapack

from flamefuse.codegen import load_generated
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load

sys.path.insert(0, str(Path(__file__).parent))
from codegen_cases import CASES, general, lower, spd, vec  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODULES = {spec: load_generated(ROOT / "generated" / f"{spec}.py") for spec in CASES}
VARIANTS = [(spec, name) for spec, mod in MODULES.items() for name in mod.VARIANTS]
# (n, block size): n = 1, n < block size, n not a multiple of the block size, block sizes 1, 3, 64
SIZES = [(1, 1), (1, 3), (1, 64), (2, 3), (7, 1), (9, 3), (10, 3), (40, 64), (131, 64)]


@pytest.mark.parametrize("spec,name", VARIANTS)
def test_kernel_matches_reference(spec, name):
    fn = MODULES[spec].VARIANTS[name]
    for n, nb in SIZES:
        rng = np.random.default_rng(1000 * n + nb)
        inputs, check = CASES[spec](rng, n)
        assert fn(*inputs, block_size=nb) == 0, (n, nb)
        err, tol = check(inputs)
        assert err <= tol, (n, nb, err, tol)


def test_default_block_size_and_default_variant():
    mod = MODULES["spd_inverse"]
    assert mod.DEFAULT is mod.VARIANTS[mod.DEFAULT_NAME]
    inputs, check = CASES["spd_inverse"](np.random.default_rng(0), 150)
    assert mod.DEFAULT(*inputs) == 0
    err, tol = check(inputs)
    assert err <= tol


@pytest.mark.parametrize("spec,minimum", [("cholesky", 3), ("ltl", 3), ("trinv", 4), ("spd_inverse", 1),
                                          ("chol_trinv", 3), ("chol_trsm", 5), ("chol_solve", 5),
                                          ("general_inverse", 1), ("trinv_trmv", 5), ("trmv_trinv", 5),
                                          ("lu", 3), ("lu_solve", 6), ("lu_nopiv", 5),
                                          ("general_inverse_nopiv", 1)])
def test_every_invariant_has_a_kernel_or_a_reason(spec, minimum):
    mod = MODULES[spec]
    count = len(enumerate_cpsat(load(ROOT / "specs" / f"{spec}.yaml")))
    names = {f"{spec}_v{k}" for k in range(1, count + 1)}
    assert set(mod.VARIANTS) | set(mod.NOT_DERIVED) == names
    assert not set(mod.VARIANTS) & set(mod.NOT_DERIVED)
    assert all(mod.NOT_DERIVED.values())
    assert len(mod.VARIANTS) >= minimum


def _not_spd(n, bad):
    a = spd(np.random.default_rng(n), n)
    a[bad, bad] = -1.0
    return a


@pytest.mark.parametrize("spec", ["cholesky", "spd_inverse", "chol_trinv", "chol_solve"])
@pytest.mark.parametrize("n,bad,nb", [(1, 0, 1), (10, 4, 3), (10, 9, 64), (70, 66, 64)])
def test_not_spd_gives_lapack_info(spec, n, bad, nb):
    a = _not_spd(n, bad)
    want = lapack.dpotrf(a.copy(order="F"), lower=1)[1]
    assert want > 0
    for fn in MODULES[spec].VARIANTS.values():
        extra = [vec(np.random.default_rng(1), n)] if spec == "chol_solve" else []
        assert fn(a.copy(order="F"), *extra, block_size=nb) == want


@pytest.mark.parametrize("n,bad,nb", [(5, 2, 3), (12, 11, 4), (3, 0, 64)])
def test_singular_triangle_gives_lapack_info(n, bad, nb):
    lo = lower(np.random.default_rng(n), n)
    lo[bad, bad] = 0.0
    want = lapack.dtrtri(lo.copy(order="F"), lower=1)[1]
    for fn in MODULES["trinv"].VARIANTS.values():
        assert fn(lo.copy(order="F"), block_size=nb) == want == bad + 1


def test_zero_pivot_without_pivoting_gives_info():
    a = general(np.random.default_rng(3), 8)
    a[0, 0] = 0.0
    for fn in MODULES["lu_nopiv"].VARIANTS.values():
        assert fn(a.copy(order="F"), block_size=3) == 1


def test_bitwise_deterministic():
    fn = MODULES["spd_inverse"].DEFAULT
    a = spd(np.random.default_rng(5), 97)
    x, y = a.copy(order="F"), a.copy(order="F")
    fn(x, block_size=16)
    fn(y, block_size=16)
    assert np.array_equal(x, y)


class TestCheckedInputs:
    fn = staticmethod(MODULES["cholesky"].DEFAULT)
    solve = staticmethod(MODULES["chol_solve"].DEFAULT)

    def test_dtype(self):
        for bad in (np.int64, np.float16, np.bool_):
            with pytest.raises(TypeError, match="float32, float64, complex64, complex128"):
                self.fn(np.eye(3, dtype=bad, order="F"))

    def test_not_an_array(self):
        with pytest.raises(TypeError, match="numpy.ndarray"):
            self.fn([[1.0]])

    def test_c_order(self):
        with pytest.raises(ValueError, match="Fortran"):
            self.fn(np.ascontiguousarray(spd(np.random.default_rng(0), 4)))

    def test_non_contiguous(self):
        big = np.asfortranarray(np.eye(8))
        with pytest.raises(ValueError, match="Fortran"):
            self.fn(big[::2, ::2])

    def test_not_square(self):
        with pytest.raises(ValueError, match="square"):
            self.fn(np.zeros((3, 4), order="F"))

    def test_wrong_ndim(self):
        with pytest.raises(ValueError, match="2-D"):
            self.fn(np.zeros(3))

    def test_vector_length(self):
        with pytest.raises(ValueError, match="dimension"):
            self.solve(np.asfortranarray(np.eye(3)), np.zeros(4))

    def test_vector_shape(self):
        with pytest.raises(ValueError, match="1-D"):
            self.solve(np.asfortranarray(np.eye(3)), np.zeros((3, 1)))

    def test_read_only(self):
        a = np.asfortranarray(np.eye(3))
        a.flags.writeable = False
        with pytest.raises(ValueError, match="writeable"):
            self.fn(a)

    def test_block_size(self):
        for bad in (0, -1, 2.5, True):
            with pytest.raises(ValueError, match="block_size"):
                self.fn(np.asfortranarray(np.eye(3)), block_size=bad)

    def test_shared_memory(self):
        lo = lower(np.random.default_rng(0), 4)
        with pytest.raises(ValueError, match="share memory"):
            MODULES["trinv_trmv"].DEFAULT(lo, lo, np.zeros(4), np.zeros(4))
