"""A loop whose slices do not move (a Jacobi or FDTD time step: the same whole-array statements on
every iteration) is left to runtime fusion where its arrays are large lazy ones: fusion runs it as
one reused plan, in parallel, and the compiled loop's one thread was 2.5x slower on the corpus's
jacobi_2d (flamefuse.loops.extract.fixed_slices, flamefuse.loops.guard). On NumPy's arrays (plain
mode), and where the slices move with the loop (gauss, Cholesky), the loop is compiled."""
import ast

import numpy as np
import pytest

import flamefuse.lazy as lazy
from flamefuse.loops.extract import fixed_slices
from flamefuse.loops.site import Site
from loops_helpers import calls, compiled, corpus_source, declined, plain, same_bits

JACOBI = """
import numpy as np

def step(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A, B
"""


@pytest.mark.parametrize("name, fixed", [("jacobi_2d", True), ("fdtd_2d", True), ("gramschmidt", False),
                                         ("cholesky", False), ("lu_loops", False),
                                         ("doitgen", False)])
def test_fixed_slices_of_corpus_loops(name, fixed):
    source = corpus_source(name)
    kernel = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "kernel")
    assert fixed_slices(next(n for n in ast.walk(kernel) if isinstance(n, ast.For))) is fixed


def test_fixed_is_kept_with_the_site():
    site = Site(0, "f", 3, None)
    site.fixed = True
    assert Site.of(site.plain()).fixed is True


def _inputs(n):
    i = np.arange(n, dtype=np.float64)
    return (i[:, None] * (i[None, :] + 2) + 2) / n, (i[:, None] * (i[None, :] + 3) + 3) / n


def test_large_lazy_arrays_are_left_to_fusion_numpy_arrays_compiled():
    want = plain(JACOBI)["step"](*_inputs(200), 3)
    before = calls()
    got = compiled(JACOBI)["step"](*_inputs(200), 3)         # NumPy's arrays: compiled
    assert calls()[0] == before[0] + 1
    assert all(same_bits(g, w) for g, w in zip(got, want))
    A, B = (lazy.asarray(x) for x in _inputs(200))           # 40 000 elements each, lazy
    got = compiled(JACOBI)["step"](A, B, 3)
    assert any("left to runtime fusion" in why for why in declined())
    assert all(same_bits(np.asarray(g), w) for g, w in zip(got, want))


def test_small_lazy_arrays_are_compiled():
    want = plain(JACOBI)["step"](*_inputs(20), 3)
    before = calls()
    A, B = (lazy.asarray(x) for x in _inputs(20))
    got = compiled(JACOBI)["step"](A, B, 3)
    assert calls()[0] == before[0] + 1
    assert all(same_bits(np.asarray(g), w) for g, w in zip(got, want))


HEAT = """
import numpy as np
u = U.copy()
for _ in range(3):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                            - 4.0 * u[1:-1, 1:-1])
"""


def test_a_module_level_fixed_site_on_large_lazy_arrays_is_left_to_fusion():
    """benchmarks/programs/heat.py's time loop is at module level: its compiled variant keeps
    ``fixed`` (it did not, and the loop ran compiled on one thread)."""
    from loops_helpers import run_module
    U = np.linspace(0.0, 1.0, 250 * 250).reshape(250, 250)
    want = run_module(HEAT, compiled=False, U=U)["u"]
    got = run_module(HEAT, compiled=True, U=lazy.asarray(U))["u"]
    assert any("left to runtime fusion" in why for why in declined())
    assert same_bits(np.asarray(got), want)


def test_the_size_left_to_fusion_is_the_one_lazy_is_configured_with():
    """The guard reads flamefuse.lazy's ``eager_below`` as configured (it once imported the
    recorder for it: an import up the layers); at 0, small lazy arrays are recorded and fused too."""
    want = plain(JACOBI)["step"](*_inputs(20), 3)
    try:
        lazy.configure(eager_below=0)
        A, B = (lazy.asarray(x) for x in _inputs(20))
        got = compiled(JACOBI)["step"](A, B, 3)
        assert any("left to runtime fusion" in why for why in declined())     # (install empties them)
    finally:
        lazy.configure(eager_below=1 << 15)
    assert all(same_bits(np.asarray(g), w) for g, w in zip(got, want))
