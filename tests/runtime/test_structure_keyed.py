"""Kernels keyed by structure (offsets, extents, scalars are arguments), long recordings
partitioned in windows, the exact box overlap test, and start-up imports."""
import itertools
import subprocess
import sys

import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import flamefuse.lazy as lazy
from flamefuse.runtime import execute
from flamefuse.runtime.program import BaseInfo, Op, Program, Ref
from flamefuse.runtime.views import _box_overlap, contiguous, make_view


def _new_sources(before):
    return {step.source for key, plan in execute._PLANS.items() if key not in before
            for step in plan.steps}


def test_gauss_elimination_n300_compiles_a_handful_of_kernels():
    n = 300
    rng = numpy.random.default_rng(0)
    A = rng.standard_normal((n, n)) + n * numpy.eye(n)
    before = set(execute._PLANS)

    def gauss(np, a):
        for k in range(n - 1):
            f = a[k + 1:, k] / a[k, k]
            a[k + 1:, k:] -= f[:, None] * a[k, k:]
        return a
    got = numpy.asarray(gauss(lazy, lazy.array(A)))
    want = gauss(numpy, A.copy())
    numpy.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * n)
    sources = _new_sources(before)
    # one per structure: parallel/serial variants and the last steps' degenerate extents
    assert 1 <= len(sources) <= 16, len(sources)
    assert all("a3[" not in s or "n" in s for s in sources)


def test_one_kernel_source_for_every_offset_and_extent(monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    monkeypatch.setattr(lazy.RECORDER, "eager_below", 0)
    before = set(execute._PLANS)
    x = numpy.arange(400.0)
    a = lazy.asarray(x.copy()) * 1
    for k in range(1, 30):
        a[k:200 + k] += 0.5 * a[k + 100:300 + k] + k            # each k: new offsets, new scalar
        lazy.flush()
    for k in range(1, 30):
        x[k:200 + k] += 0.5 * x[k + 100:300 + k] + k
    numpy.testing.assert_array_equal(numpy.asarray(a), x)
    sources = _new_sources(before)
    # the first flush (the base still fresh) has its own plan; then one structure for every k
    later = {tuple(step.source for step in plan.steps) for key, plan in execute._PLANS.items()
             if key not in before and not key[0].bases[0].fresh and len(key[0].ops) == 3}
    assert len(later) == 1, later
    assert not any(lit in src for src in sources for lit in ("200", "100", "299"))


def test_long_recordings_run_in_windows_with_numpys_result(monkeypatch):
    monkeypatch.setenv("FLAMEFUSE_JIT", "0")
    lazy.configure(eager_below=0)
    try:
        grid = numpy.zeros((12, 12))
        grid[0] = 1.0
        g = lazy.asarray(grid.copy())
        for arr in (g, grid):
            for _ in range(40):          # about 240 ops recorded without a sync point
                c = arr[1:-1, 1:-1]
                c[:] = 0.25 * (arr[:-2, 1:-1] + arr[2:, 1:-1] + arr[1:-1, :-2] + arr[1:-1, 2:])
        before = set(execute._PLANS)
        numpy.testing.assert_allclose(numpy.asarray(g), grid, rtol=1e-14)
        assert len(_new_sources(before)) <= 4
    finally:
        lazy.configure(eager_below=1 << 15)


def test_windows_cut_where_fewest_arrays_are_live():
    v = contiguous((10,))
    ops = []
    for it in range(30):          # x = x + t_it, t_it fresh each iteration: 2 ops per iteration
        t = 1 + it
        ops.append(Op("ew", "copy", Ref(t, v), (Ref(0, v),), (10,), ("float64", "float64")))
        ops.append(Op("ew", "add", Ref(0, v), (Ref(0, v), Ref(t, v)), (10,),
                      ("float64", "float64", "float64")))
    bases = (BaseInfo("float64", 10, False, False),) + (BaseInfo("float64", 10, True, True),) * 30
    parts = execute.windows(Program(tuple(ops), bases), 9)
    assert sum(len(p.ops) for p in parts) == 60
    assert all(len(p.ops) % 2 == 0 and 4 <= len(p.ops) <= 9 for p in parts[:-1])
    # a temporary accessed in one window stays fresh and dead there; base 0 is never either
    assert all(not p.bases[0].fresh and not p.bases[0].dead for p in parts)
    assert all(p.bases[p.ops[0].out.base].fresh for p in parts)


views = st.builds(lambda off, shape, strides: make_view(off, shape, strides[:len(shape)]),
                  st.integers(0, 30), st.lists(st.integers(1, 5), min_size=1, max_size=3),
                  st.lists(st.sampled_from([0, 1, 2, 3, 4, 6, 8, 12, 24]), min_size=3, max_size=3))


def _elements(v):
    return {v.offset + sum(i * s for i, s in zip(idx, v.strides))
            for idx in itertools.product(*[range(n) for n in v.shape])}


@settings(max_examples=400, deadline=None)
@given(views, views)
def test_box_overlap_is_exact_where_it_answers(a, b):
    r = _box_overlap(a, b)
    if r is not None:
        assert r == bool(_elements(a) & _elements(b))


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


HEAVY = "('ortools', 'pandas', 'sympy', 'flamefuse.cluster', 'flamefuse.loopnest', 'flamefuse.search')"


def test_import_lazy_and_the_fuse_command_load_no_heavy_machinery():
    assert _run(f"import sys, flamefuse.lazy; print([m for m in {HEAVY} + ('numba',) if m in sys.modules])") == "[]"
    assert _run("import sys; from flamefuse.cli import build_parser; build_parser('fuse'); "
                f"print([m for m in {HEAVY} if m in sys.modules])") == "[]"
    # the cpsat partitioner and products load theirs when used (a computed matrix: the product
    # of a pending one is a fused row sum); a product alone is NumPy's gemv, two that read
    # one matrix are a loop nest
    setup = ("import sys, numpy, flamefuse.lazy as np; np.configure(eager_below=0); "
             "a = np.ones((3, 3)) * 2; v = np.ones(3) * 1; np.flush(); ")
    loaded = "; print('flamefuse.loopnest' in sys.modules)"
    assert _run(setup + "print(float((a @ v).sum()))" + loaded).split() == ["18.0", "False"]
    assert _run(setup + "print(float((a @ v).sum() + (a.T @ v).sum()))" + loaded).split() == ["36.0", "True"]
