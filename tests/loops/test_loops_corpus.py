"""Differential: the corpus's linear-algebra loops as written (Python) and compiled
(flamefuse.loops), bit for bit, at several sizes (one compile per loop)."""
import numpy as np
import pytest

pytest.importorskip("numba")

from loops_helpers import calls, compiled, corpus_source, plain, same_bits  # noqa: E402


def _inputs(name, n):
    rng = np.random.default_rng(n)
    if name == "cholesky":
        M = rng.random((n, n))
        return (M @ M.T + n * np.eye(n),)
    if name == "lu_loops":
        return (rng.random((n, n)) + n * np.eye(n),)
    if name == "trisolv":
        return np.tril(rng.random((n, n))) / n + np.eye(n), rng.random((3, n))
    if name == "durbin":
        return (0.5 ** np.arange(1, n + 1) + 1e-3 * np.cos(np.arange(n)),)
    raise KeyError(name)


@pytest.mark.parametrize("name,sizes", [("cholesky", (1, 2, 3, 17, 120)), ("lu_loops", (1, 2, 5, 64, 131)),
                                        ("trisolv", (1, 2, 9, 200)), ("durbin", (2, 3, 10, 333, 1500))])
def test_compiled_loop_gives_numpys_bits(name, sizes):
    source = corpus_source(name)
    ref, ours = plain(source), compiled(source, f"{name}.py")
    for n in sizes:
        args = _inputs(name, n)
        want = ref["kernel"](*[a.copy() for a in args])
        before = calls()[0]
        got = ours["kernel"](*[a.copy() for a in args])
        assert calls()[0] > before, f"{name} n={n}: the loop was not compiled"
        for w, g in zip(want, got):
            assert same_bits(w, g), f"{name} n={n}: differs by {np.max(np.abs(w - g))}"


def test_a_loop_in_a_method_and_an_if_with_min_max_abs():
    source = '''
import numpy as np

class Sweep:
    def run(self, x, lo, hi):
        n = x.shape[0]
        for i in range(1, n - 1):
            m = min(x[i - 1], x[i + 1])
            if x[i] > hi or (x[i] < lo and not m > 0):
                x[i] = max(m, abs(x[i])) * 0.5
            elif x[i] != x[i]:
                x[i] = -1.0
            else:
                x[i] = np.sqrt(abs(x[i])) + m / 3
        return x
'''
    rng = np.random.default_rng(3)
    x = rng.standard_normal(500) * 3
    ref, ours = plain(source)["Sweep"](), compiled(source)["Sweep"]()
    assert same_bits(ref.run(x.copy(), -1.0, 2), ours.run(x.copy(), -1.0, 2))
    assert calls() == (1, 0)
    # with NaNs (their comparisons may raise the invalid flag: then it runs as written)
    x[::37] = np.nan
    assert same_bits(ref.run(x.copy(), -1.0, 2), ours.run(x.copy(), -1.0, 2))


def test_negative_indices_and_slice_bounds_and_overlapping_slices():
    source = '''
def h(x, y, n):
    for i in range(n):
        y[i] = x[i - 1] * 2.0 - x[-1]
        y[-i - 1:] -= x[:i + 1] * 0.5
        y[:-1] += y[1:] / 3
        y[i:-2:2] = -y[i + 2::2]
    return y
'''
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(40), rng.standard_normal(40)
    ref, ours = plain(source)["h"], compiled(source)["h"]
    for n in (1, 7, 40):
        assert same_bits(ref(x, y.copy(), n), ours(x, y.copy(), n)), n
    assert calls() == (3, 0)
