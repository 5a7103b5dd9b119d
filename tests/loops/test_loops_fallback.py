"""What runs when a compiled loop may not or cannot give NumPy's result: the loop as written,
from the same state (flamefuse.loops.guard): NumPy's warnings, Python's exceptions, aliasing,
and lazy arrays (flamefuse.lazy)."""
import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

from loops_helpers import calls, compiled, declined, plain, same_bits  # noqa: E402

SOURCE = '''
import numpy as np

def f(x, y, c, d, n):
    for i in range(n):
        x[i] = x[i] / y[i] + c / d
    return x
'''


def _both(*args, expect=None):
    """Run ``f`` as written and compiled on copies of ``args``; the results and what was
    raised or warned."""
    out = []
    for ns in (plain(SOURCE), compiled(SOURCE)):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                ns["f"](*a)
                err = None
            except Exception as e:     # noqa: BLE001
                err = (type(e), str(e))
        out.append((a[0], err, [(x.category, str(x.message)) for x in w]))
    return out


def test_ordinary_call_is_compiled():
    x, y = np.arange(1.0, 6.0), np.full(5, 3.0)
    (want, e1, w1), (got, e2, w2) = _both(x, y, 1.0, 7.0, 5)
    assert same_bits(want, got) and e1 is e2 is None and w1 == w2 == []
    assert calls() == (1, 0)


def test_division_by_zero_gives_numpys_warning_and_result():
    x, y = np.arange(1.0, 6.0), np.array([1.0, 2.0, 0.0, 4.0, 5.0])
    (want, e1, w1), (got, e2, w2) = _both(x, y, 1.0, 7.0, 5)
    assert e1 is e2 is None
    assert w1 == w2 and w1 and w1[0][0] is RuntimeWarning and "divide by zero" in w1[0][1]
    assert same_bits(want, got) and np.isinf(got[2])
    # (a scalar division by zero now stops the compiled loop itself: _div, numba_parts)
    assert calls() == (0, 1) and "raised" in next(iter(declined()))


def test_overflow_gives_numpys_warning_through_the_flag():
    x, y = np.full(5, 1e300), np.full(5, 1e-300)
    (want, e1, w1), (got, e2, w2) = _both(x, y, 1.0, 7.0, 5)
    assert e1 is e2 is None
    assert w1 == w2 and w1 and w1[0][0] is RuntimeWarning and "overflow" in w1[0][1]
    assert same_bits(want, got) and np.isinf(got[0])
    assert calls() == (0, 1) and "floating-point flag" in next(iter(declined()))


def test_python_float_division_by_zero_raises_zerodivisionerror():
    x, y = np.arange(1.0, 6.0), np.full(5, 2.0)
    (want, e1, w1), (got, e2, w2) = _both(x, y, 1.0, 0.0, 5)
    assert e1 == e2 and e1[0] is ZeroDivisionError
    assert same_bits(want, got) and same_bits(got, x)      # nothing written before the error
    assert calls() == (0, 1)


def test_out_of_range_index_gives_pythons_indexerror_and_the_loops_partial_writes():
    x, y = np.arange(1.0, 6.0), np.full(5, 2.0)
    (want, e1, _), (got, e2, _) = _both(x, y, 1.0, 4.0, 7)
    assert e1 == e2 and e1[0] is IndexError
    assert same_bits(want, got) and not same_bits(got, x)     # written up to the error, as the loop does
    assert calls() == (0, 1) and "raised" in next(iter(declined()))


def test_aliasing_same_object_is_compiled_overlapping_views_run_as_written():
    x = np.arange(1.0, 7.0)
    ref, ours = plain(SOURCE)["f"], compiled(SOURCE)["f"]
    a, b = x.copy(), x.copy()
    assert same_bits(ref(a, a, 0.5, 3.0, 6), ours(b, b, 0.5, 3.0, 6))      # y is x
    assert calls() == (1, 0)
    a, b = x.copy(), x.copy()
    assert same_bits(ref(a[1:], a[:-1], 0.5, 3.0, 5), ours(b[1:], b[:-1], 0.5, 3.0, 5))
    assert same_bits(a, b)
    assert calls() == (1, 1) and "may share memory" in " ".join(declined())


ELEMENTWISE = '''
import numpy as np

def g(y, r, n):
    for k in range(1, n):
        y[:k] += r[k] * y[k - 1::-1]
        y[k] = np.dot(r[k - 1::-1], y[:k])
    return y
'''


def test_overlapping_slice_updates_use_numpys_temporaries():
    """``y[:k] += a * y[k-1::-1]`` reads what it overwrites: NumPy evaluates the right side first."""
    rng = np.random.default_rng(1)
    r, y = rng.random(300) * 0.01, rng.random(300)
    want = plain(ELEMENTWISE)["g"](y.copy(), r, 300)
    got = compiled(ELEMENTWISE)["g"](y.copy(), r, 300)
    assert calls() == (1, 0) and same_bits(want, got)


LAZY = '''
import numpy as np

def kernel(A):
    n = A.shape[0]
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return np.tril(A)
'''


def test_lazy_arrays_under_flamefuse_lazy():
    """A LazyArray argument (pending work on it) is made NumPy's array through its ``__array__``:
    the compiled loop's writes land in its storage and later lazy operations see them."""
    import flamefuse.lazy as lazy
    n = 200                         # 40 000 elements: recorded, not run eagerly
    rng = np.random.default_rng(2)
    M = rng.random((n, n))
    S = M @ M.T + n * np.eye(n)
    want = plain(LAZY)["kernel"](S.copy()) * 2.0 + 1.0
    ns = compiled(LAZY, np=lazy)
    ns["np"] = lazy
    A = lazy.asarray(S) * 1.0       # pending
    got = ns["kernel"](A) * 2.0 + 1.0
    assert calls() == (1, 0), declined()
    assert same_bits(want, np.asarray(got))


POKE = '''
def poke(x, k):
    for i in range(k, k + 1):
        x[i] = x[i] + 1.0
    return x
'''


def test_a_short_loop_into_a_large_array_runs_as_written_once_measured_faster(adaptive):
    """Copying a 64 MB written array (milliseconds) costs a thousand times the one-element loop
    as written (microseconds): after one compiled call and one timed call as written, the site
    runs as written."""
    x = np.zeros(8 << 20)
    poke = compiled(POKE)["poke"]
    for k in range(7):
        poke(x, k)
    assert same_bits(x[:8], np.array([1.0] * 7 + [0.0]))
    reasons = declined()
    assert calls()[0] == 2      # the first call (library loaded) and one measured
    assert reasons.get("timed as written once (copying the written arrays took most of a compiled call)") == 1
    assert sum(n for why, n in reasons.items() if why.startswith("measured faster as written")) == 4


def test_a_short_loop_called_often_is_timed_as_written_once(adaptive):
    """A two-iteration loop on a small array: the compiled call (guard included) is under
    SHORT_S, so one call is timed as written; whichever is faster runs after, same bits."""
    x, ref = np.zeros(64), np.zeros(64)
    poke, ref_poke = compiled(POKE)["poke"], plain(POKE)["poke"]
    for k in range(40):
        poke(x, k)
        ref_poke(ref, k)
    assert same_bits(x, ref)
    reasons = declined()
    assert sum(n for why, n in reasons.items() if why.startswith("timed as written once (a compiled call took")) == 1
    assert calls()[0] + sum(reasons.values()) == 40


INTDIV = '''
def f(x, k, n):
    for i in range(n):
        x[i] = i / k + (i - 1) / (k - 1)
    return x
'''


@pytest.mark.parametrize("k", [0, 1])
def test_int_true_division_by_zero_raises_pythons_zerodivisionerror(k):
    f = compiled(INTDIV)["f"]
    assert same_bits(f(np.zeros(3), 2, 3), np.array([-1.0, 0.5, 2.0]))
    x = np.zeros(3)
    with pytest.raises(ZeroDivisionError):
        f(x, k, 3)
    assert same_bits(x, np.zeros(3)) and calls() == (1, 1)


def test_a_failure_of_the_guard_itself_runs_the_loop_as_written(monkeypatch):
    from flamefuse.loops import guard

    def broken(*args):
        raise RuntimeError("a bug of flamefuse")
    monkeypatch.setattr(guard, "_launcher", broken)
    x, y = np.arange(1.0, 6.0), np.full(5, 3.0)
    (want, e1, _), (got, e2, _) = _both(x, y, 1.0, 7.0, 5)
    assert e1 is e2 is None and same_bits(want, got)
    assert calls() == (0, 1) and "the guard failed (RuntimeError: a bug of flamefuse)" in declined()
