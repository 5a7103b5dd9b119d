"""The SIMD split's cost model (:mod:`flamefuse.runtime.simd`): a transcendental ufunc on a large
array runs as NumPy's own call only where NumPy's measured time, plus the two memory passes and
the flush the split adds, is clearly below the fused kernel's scalar time shared by its threads.
Decisions on fixed costs, and what a split gives: NumPy's bits and NumPy's warnings, the rest
fused."""
import warnings

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.runtime import adapt, chunks, simd

F8 = ("float64", "float64")
BIG = 1 << 21
needs_simd = pytest.mark.skipif(not (simd.simd_loop("log", F8) and simd.simd_loop("sin", F8)),
                                reason="NumPy has no SIMD log/sin loop on this CPU")


def test_split_pays_on_fixed_costs():
    ns = 1e-9
    # tanh: NumPy 0.8 ns, the kernel 7.5 ns on one thread: split on 2 threads, not on 16
    assert simd.split_pays(0.8 * ns, 0.34 * ns, 7.5 * ns, 2, BIG)
    assert not simd.split_pays(0.8 * ns, 0.34 * ns, 7.5 * ns, 16, BIG)
    # float64 cos: NumPy's loop no faster than the C library's
    assert not simd.split_pays(7.5 * ns, 0.34 * ns, 7.6 * ns, 2, BIG)
    assert not simd.split_pays(7.5 * ns, 0.34 * ns, 7.6 * ns, 1, BIG)
    # exp: a gain under the margin is not taken
    assert not simd.split_pays(0.57 * ns, 0.34 * ns, 2.9 * ns, 2, BIG)
    assert simd.split_pays(0.57 * ns, 0.34 * ns, 2.9 * ns, 1, BIG)
    # the extra flush weighs on a small operation: 100 us over 65536 elements is 1.5 ns each
    assert not simd.split_pays(0.8 * ns, 0.34 * ns, 7.5 * ns, 2, 1 << 16)
    assert simd.split_pays(0.8 * ns, 0.34 * ns, 7.5 * ns, 1, 1 << 16)


def test_the_kernels_time_per_function():
    assert simd.kernel_seconds("tanh", "float64") == pytest.approx(7.5e-9)
    assert simd.kernel_seconds("cos", "float32") == pytest.approx(1.8e-9)
    from flamefuse.runtime.teamcost import CALL_NS
    assert simd.kernel_seconds("nonesuch", "float64") == pytest.approx(CALL_NS * 1e-9)


@pytest.fixture
def costs(monkeypatch):
    """NumPy's measured times pinned (ns per element): tanh, log and sin fast, cos slow, the
    copy 0.3 ns; one thread (the kernel's times: :data:`simd.KERNEL_NS`)."""
    table = {"tanh": 0.8, "log": 0.6, "sin": 0.5, "cos": 7.5, "copy": 0.3}

    def per_element(kind, name, loop, n):
        asked.append(name)
        return table[name] * 1e-9
    asked = []
    monkeypatch.setattr(adapt, "per_element", per_element)
    monkeypatch.setattr(chunks, "CHUNKS", 1)
    monkeypatch.delenv("FLAMEFUSE_NUMPY_SIMD", raising=False)
    return asked


@needs_simd
def test_the_default_decides_by_the_model(costs, monkeypatch):
    assert simd.numpy_faster("tanh", F8, BIG)
    assert simd.numpy_faster("sin", F8, BIG)        # a candidate now: NumPy's time decides
    del costs[:]
    assert not simd.numpy_faster("cos", F8, BIG)     # 7.5 ns in NumPy against 7.6 fused
    assert costs == ["cos"]                          # lost already: the copy was not timed
    monkeypatch.setattr(chunks, "CHUNKS", 16)
    assert not simd.numpy_faster("tanh", F8, BIG)    # 16 threads: 0.5 ns per element fused
    monkeypatch.setattr(chunks, "CHUNKS", 1)
    assert not simd.numpy_faster("tanh", F8, simd.MIN_ELEMENTS - 1)
    assert not simd.numpy_faster("tanh", ("int64", "float64"), BIG)
    monkeypatch.setenv("FLAMEFUSE_NUMPY_SIMD", "1")      # the earlier rule: every SIMD loop
    assert simd.numpy_faster("cos", F8, BIG)
    monkeypatch.setenv("FLAMEFUSE_NUMPY_SIMD", "0")
    assert not simd.numpy_faster("tanh", F8, BIG)


def _recorded(fn):
    lazy.flush()
    lazy.reset_stats()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
        result = out.numpy() if isinstance(out, lazy.LazyArray) else out
    return result, lazy.stats()["recorded"], [(w.category, str(w.message)) for w in caught]


def _numpy(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message)) for w in caught]


@needs_simd
def test_a_split_log_of_negatives_is_numpys_bits_and_warning(costs):
    x = numpy.random.default_rng(0).uniform(-5.0, 5.0, BIG // 8)      # no zero: one warning
    want, want_warnings = _numpy(lambda: numpy.log(x * 0.5) + 1.0)
    got, recorded, got_warnings = _recorded(lambda: lazy.log(lazy.asarray(x) * 0.5) + 1.0)
    assert numpy.array_equal(got, want, equal_nan=True)
    assert got_warnings == want_warnings == [(RuntimeWarning, "invalid value encountered in log")]
    assert recorded == 2          # the multiply and the add fused; the log NumPy's own call


@needs_simd
def test_a_split_sin_beside_a_fused_cos(costs):
    x = numpy.random.default_rng(1).uniform(-50.0, 50.0, BIG // 8)
    want = numpy.sin(x * 0.3) * numpy.cos(x * 0.7)
    got, recorded, _ = _recorded(lambda: lazy.sin(lazy.asarray(x) * 0.3) * lazy.cos(lazy.asarray(x) * 0.7))
    assert recorded == 4          # two multiplies, the cos and the product: not the sin
    assert numpy.allclose(got, want, rtol=1e-15, atol=0)
    # the split sin is NumPy's bit for bit
    s, recorded, _ = _recorded(lambda: lazy.sin(lazy.asarray(x) * 0.3) + 0.0)
    assert recorded == 2 and numpy.array_equal(s, numpy.sin(x * 0.3) + 0.0)
