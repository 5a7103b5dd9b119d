"""Clustered filter loops while their libraries compile in the background (issue 29).

With ``FLAMEFUSE_COMPILE=background`` a stage with boolean masks whose loops have no native
library yet runs their recorded ops as NumPy's own calls (:func:`flamefuse.runtime.filter_numpy.run`)
and wants the libraries; nothing is compiled through Numba in the script's process (it was:
every such loop compiled inline, 1-30 s for a script whose NumPy run takes 0.1 s). These tests
run in this process with a private cache folder and no worker (the wants are only noted), the
inline compile made an error: results are NumPy's bit for bit, warnings NumPy's, and a ``min``
of an empty selection is NumPy's error at the end of the flush. The whole path with the worker
and the warm run after it: tests/runtime/test_background_compile.py.
"""
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, given, settings

import flamefuse.lazy as lazy
from flamefuse.runtime import compiler, execute, filters, kernel
from test_filters import check, filter_programs


@pytest.fixture
def background(monkeypatch, tmp_path):
    """Background mode with an empty private cache and no worker; an inline compile fails."""
    monkeypatch.setenv("FLAMEFUSE_COMPILE", "background")
    monkeypatch.setenv("FLAMEFUSE_NATIVE", "1")
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_start", lambda path: False)
    for name in ("_PENDING", "_ITEMS"):
        monkeypatch.setattr(compiler, name, {})
    monkeypatch.setattr(compiler, "_HANDED", set())
    monkeypatch.setattr(compiler, "STATS", compiler.STATS.__class__())
    for name in ("_KERNELS", "_PLANS"):
        monkeypatch.setattr(filters, name, {})
    monkeypatch.setattr(filters, "_NATIVE", set())
    monkeypatch.setattr(filters, "_WRITTEN", set())
    monkeypatch.setattr(execute, "_PLANS", {})

    def no_compile(source):
        raise AssertionError("a kernel was compiled in the script's process in background mode")
    monkeypatch.setattr(kernel, "compile_kernel", no_compile)
    monkeypatch.setattr(execute, "compile_kernel", no_compile)
    assert compiler.background()
    lazy.configure(partitioner="greedy", eager_below=0)
    lazy.flush()
    yield tmp_path
    lazy.flush()
    lazy.configure(eager_below=1 << 15)


def _masked(mod, n=4000):
    """Means and log-sums by bins (azimint), a masked update and an empty selection's mean."""
    rng = numpy.random.default_rng(5)
    x, y = mod.asarray(rng.random(n)), mod.asarray(rng.random(n) - 0.25)
    res, peak = [], []
    for i in range(6):
        v = y[(x >= i / 6) & (x < (i + 1) / 6)]
        res.append(mod.log(v).sum())            # negative values: NumPy's invalid-value warning
        peak.append((v * 2.0 + 1.0).max())
        res.append(v.mean())
    res.append(y[x > 2.0].mean())               # an empty selection: NumPy's two warnings
    z = x * 1.0
    m = z < 0.5
    z = mod.where(m, z * z + 0.25, z)
    res.append(z[m].sum())
    return [numpy.asarray(r) for r in res + peak]


def test_a_masked_program_runs_as_numpys_calls_while_its_loops_compile(background):
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = _masked(numpy)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = _masked(lazy)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and numpy.array_equal(g, w, equal_nan=True)
    assert [(w.category, str(w.message)) for w in got_w] == \
        [(w.category, str(w.message)) for w in want_w]
    assert compiler.STATS["deferred_loops"] > 0
    assert compiler.pending() > 0                   # the loops' libraries are wanted
    kernels = list((background / "kernels").glob("ffk_*.py"))
    assert kernels, "the loops' texts were not kept for the background compiler"


def test_the_same_loop_at_each_iteration_is_one_kernel(background):
    """The loop of one bin is the same text at every iteration (its locals named by first
    appearance, not by the bases of that iteration): a few libraries for 20 bins, not one each."""
    rng = numpy.random.default_rng(2)
    r, d = lazy.asarray(rng.random(3000)), lazy.asarray(rng.random(3000))
    out = [d[(i / 20 <= r) & (r < (i + 1) / 20)].mean() for i in range(20)]
    lazy.flush()
    assert compiler.STATS["deferred_loops"] >= 20
    loops = {source for source, _ in compiler._PENDING if "\ndef kernel(n" in source}
    assert 1 <= len(loops) <= 6, len(loops)      # (the stage's pieces cluster in a few ways)
    rn, dn = numpy.asarray(r), numpy.asarray(d)
    for i, m in enumerate(out):
        assert float(m) == dn[(i / 20 <= rn) & (rn < (i + 1) / 20)].mean()


def test_min_of_an_empty_selection_is_numpys_error_at_the_flush(background):
    x = lazy.asarray(numpy.arange(10.0))
    s = x[x > 100].sum()
    r = x[x > 100].max()
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        lazy.flush()
    assert float(s) == 0.0
    del r


def test_random_filter_programs_match_numpy_bitwise(background):
    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(filter_programs)
    def inner(spec):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lazy.FallbackWarning)
            check(spec, bitwise=True)
    inner()
    assert compiler.STATS["deferred_loops"] > 20


@pytest.mark.parametrize("spec", [
    ("float64", 3000, "random", 0, [("cast", 0, "int64"), ("center", 2)]),
    ("float64", 3000, "random", 0, [("cast", 0, "bool"), ("nested", 2, 1, "min")])],
    ids=["mean-of-int-cast", "empty-min-of-bool-cast"])
def test_a_selections_astype_is_cast_while_its_loop_runs_as_numpy(background, spec):
    """A selection's ``astype`` is recorded as a ``copy`` in the source's dtype into an output of
    the new one (the kernel casts where it stores): run as NumPy's calls, the value is cast too
    (it was not: ``a - a.mean()`` of an int cast used the float values' mean, and ``a[a > 1]``
    of a bool cast was not empty, so its ``min`` did not raise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        check(spec, bitwise=True)
