"""Compiled loops with column slices, 2-D slice statements, broadcasting (``None``), ``np.outer``,
vector-matrix products and local arrays (flamefuse.loops): NumPy's bits, NumPy's errors and
warnings, targets that overlap what they read, and the forms still refused."""
import ast

import numpy as np
import pytest

pytest.importorskip("numba")

from flamefuse.loops.extract import sites  # noqa: E402
from loops_helpers import calls, check, compiled, corpus_source, declined, plain, same_bits  # noqa: E402

FACTORIZATIONS = '''
import numpy as np

def gramschmidt(A):
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        nrm = A[:, k] @ A[:, k]
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])
    return Q, R

def gauss(A, b):
    n = A.shape[0]
    a = np.hstack([A, b[:, None]])
    for k in range(n - 1):
        f = a[k + 1:, k] / a[k, k]
        a[k + 1:, k:] -= f[:, None] * a[k, k:]
    x = np.zeros(n)
    for k in range(n - 1, -1, -1):
        x[k] = (a[k, n] - a[k, k + 1:n] @ x[k + 1:]) / a[k, k]
    return x, a

def lu(A):
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A

def matvec_rows(A, x, y):
    n = A.shape[0]
    for k in range(n):
        y[k:] += A[k:, k:] @ x[k:]
        x[:k] -= x[:k] @ A[:k, :k]
    return y
'''


def _results_same(a, b):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 2), (7, 5), (24, 20), (61, 50)])
def test_factorizations_compile_and_give_numpys_bits(shape):
    assert all(s.reason is None for s in sites(ast.parse(FACTORIZATIONS))), \
        [s.reason for s in sites(ast.parse(FACTORIZATIONS))]
    m, n = shape
    rng = np.random.default_rng(m * 100 + n)
    P, C = plain(FACTORIZATIONS), compiled(FACTORIZATIONS)
    A = rng.random((m, n))
    assert _results_same(P["gramschmidt"](A.copy()), C["gramschmidt"](A.copy()))
    S = rng.standard_normal((n, n)) + n * np.eye(n)
    b = rng.standard_normal(n)
    assert _results_same(P["gauss"](S, b), C["gauss"](S, b))
    assert _results_same(P["lu"](S.copy()), C["lu"](S.copy()))
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    assert _results_same(P["matvec_rows"](S, x.copy(), y.copy()), C["matvec_rows"](S, x.copy(), y.copy()))
    done, _ = calls()
    assert done >= 5, declined()     # every site ran compiled (five sites, one call each)
    assert not declined(), declined()


def test_corpus_gramschmidt_compiles():
    source = corpus_source("gramschmidt")
    assert all(s.reason is None for s in sites(ast.parse(source)))
    ns_p, ns_c = plain(source, __name__="gs"), compiled(source, __name__="gs")
    A = ns_p["initialize"](40)[0]
    assert _results_same(ns_p["kernel"](A.copy()), ns_c["kernel"](A.copy()))
    assert calls() == (1, 0), declined()


BASE = '''
import numpy as np

def f(A, B, x, y, c, n):
{body}
'''

# statements whose target overlaps what they read: NumPy computes the right side first
OVERLAPPING = {
    "row k inside the target": ("    for k in range(n - 1):\n        g = A[k:, k] / c\n"
                                "        A[k:, k:] -= g[:, None] * A[k, k:]"),
    "shifted block": "    for k in range(1, n):\n        A[k:, :] += A[:-k, :] * c",
    "reversed column": "    for k in range(n):\n        A[:, k] = A[::-1, k] * c",
    "reversed block": "    for k in range(n):\n        A[k:, k:] -= A[:k - n - 1:-1, :k - n - 1:-1] - c",
    "column into its own block": "    for k in range(n - 1):\n        A[:, k:] -= np.outer(A[:, k], A[k, k:])",
    "same array passed twice": "    for k in range(n - 1):\n        A[k + 1:, :] -= B[k:-1, :] * c",
    "product reads the target": "    for k in range(n - 1):\n        A[k, k:] = A[k:, k] @ A[k:, k:]",
    "1-D shifted": "    for k in range(1, n):\n        x[k:] += x[:-k] * c",
    "column of the target row": "    for k in range(n - 1):\n        A[k, :] = A[:, k] + 1.0",
    "disjoint columns": "    for k in range(n - 1):\n        A[:, k + 1:] -= np.outer(A[:, k], A[k, k + 1:])",
}


@pytest.mark.parametrize("case", sorted(OVERLAPPING))
def test_overlapping_targets_give_numpys_bits(case):
    source = BASE.format(body=OVERLAPPING[case])
    assert all(s.reason is None for s in sites(ast.parse(source))), [s.reason for s in sites(ast.parse(source))]
    rng = np.random.default_rng(sorted(OVERLAPPING).index(case))
    n = 7
    vals, other = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    xs = rng.standard_normal(n)

    def make():
        A = vals.copy()
        B = A if case == "same array passed twice" else other.copy()
        return A, B, xs.copy(), xs[::-1].copy()
    check(source, make, (0.75, n))
    done, _ = calls()
    assert done == 1, declined()


BROADCASTS = {
    "row broadcast": "    for k in range(n):\n        A[k:, :] += x[None, :] * c",
    "column broadcast": "    for k in range(n):\n        A[:, k:] *= y[:, None]",
    "row without None": "    for k in range(n):\n        A[k:, :] -= x / c",
    "whole 2-D operand": "    for k in range(n):\n        A[:, :] = B * c + A",
    "sqrt and abs": "    for k in range(n):\n        A[k, :] = np.sqrt(abs(B[:, k])) + np.abs(x)",
    "outer with arithmetic": "    for k in range(n - 1):\n        A[k + 1:, k + 1:] = 2.0 * np.outer(x[k + 1:], B[k, k + 1:]) - c",
    "local array used twice": ("    for k in range(n - 1):\n        g = B[k + 1:, k] * c\n"
                               "        A[k + 1:, k] = g\n        A[k, k + 1:] -= g * x[k + 1:]"),
    "matrix times vector": "    for k in range(n):\n        y[k:] = A[k:, :] @ x - B[k, k:]",
    "vector times column block": "    for k in range(n):\n        x[:] = x @ A[:, ::-1]",
}


@pytest.mark.parametrize("case", sorted(BROADCASTS))
def test_broadcasting_statements_give_numpys_bits(case):
    source = BASE.format(body=BROADCASTS[case])
    assert all(s.reason is None for s in sites(ast.parse(source))), [s.reason for s in sites(ast.parse(source))]
    rng = np.random.default_rng(5)
    n = 6
    vals, other, xs = rng.standard_normal((n, n)), rng.random((n, n)), rng.standard_normal(n)
    check(source, lambda: (vals.copy(), other.copy(), xs.copy(), xs[::-1] + 2.0), (1.25, n))
    done, _ = calls()
    assert done == 1, declined()


FALLBACKS = {
    # lengths that differ at run time: NumPy raises (or broadcasts a length 1) as written
    "mismatch raises": ("    for k in range(n):\n        A[k:, :] += x[None, k:]", "ValueError"),
    "length-1 broadcast": ("    for k in range(n - 1, n):\n        A[k:, :] -= x[None, k:] * B[k, :]", None),
    # an empty target whose operand NumPy still computes (and warns about)
    "empty target, computed operand": ("    for k in range(n, n + 1):\n        A[:, k:] += (y[:, None] * 1e308) * c", None),
    "divide by zero": ("    for k in range(n):\n        A[k, :] = x / (B[k, :] - B[k, :])", None),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_statements_numpy_would_reject_or_warn_about_run_as_written(case):
    body, err = FALLBACKS[case]
    source = BASE.format(body=body)
    assert all(s.reason is None for s in sites(ast.parse(source)))
    rng = np.random.default_rng(9)
    n = 5
    vals, xs = rng.standard_normal((n, n)), rng.standard_normal(n)
    want = check(source, lambda: (vals.copy(), vals.T.copy(), xs.copy(), xs + 1e300), (10.0, n))
    if err is not None:
        assert want[1] is not None and want[1][0] == err, want
    if case != "length-1 broadcast":
        assert want[1] is not None or want[2], want     # NumPy raised or warned: the test can fail
    done, as_written = calls()
    assert as_written >= 1, declined()


REFUSED = {
    "np.outer of a matrix": ("    for k in range(n):\n        A[:, :] -= np.outer(A, x)", None),
    "a view bound to a name": ("    for k in range(n):\n        g = A[k, :]\n        x[:] += g", "view bound"),
    "local array updated": ("    for k in range(n):\n        g = A[k, :] * 2\n        g += x\n        y[:] = g",
                            "augmented assignment to the local array"),
    "local array written through": ("    for k in range(n):\n        g = A[k, :] * 2\n        g[0] = 1.0\n        y[:] = g",
                                    "used as an array and assigned"),
    "local array from itself": ("    for k in range(n):\n        g = x * 2\n        g = g[::-1] * 2\n        y[:] = g",
                                "from itself"),
    "None in a target": ("    for k in range(n):\n        A[:, None] = 1.0", "None"),
    "matrix times matrix": ("    for k in range(n):\n        A[:, :] = A @ B", "@"),
    "np.dot of a matrix": ("    for k in range(n):\n        x[:] = np.dot(A, y)", "np.dot"),
    "2-D local array": ("    for k in range(n):\n        g = np.outer(x, y)\n        A[:, :] = g", "one dimension"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_forms_still_refused_run_as_written(case):
    body, why = REFUSED[case]
    source = BASE.format(body=body)
    rng = np.random.default_rng(2)
    n = 4
    vals, xs = rng.standard_normal((n, n)), rng.standard_normal(n)
    check(source, lambda: (vals.copy(), vals.T.copy(), xs.copy(), xs + 1.0), (3.0, n))
    done, _ = calls()
    assert done == 0
    found = sites(ast.parse(source))
    reasons = [s.reason for s in found if s.reason] + list(declined())
    if why is not None:
        assert any(why in r for r in reasons), reasons


def test_a_loop_variable_reused_by_a_later_loop_does_not_stop_either():
    """gauss's two loops both use k: a read of k in the second loop's body sees the second
    loop's own k, so neither loop has to hand its k back."""
    source = '''
import numpy as np

def f(a, x, n):
    for k in range(n):
        a[k, k] += 1.0
    for k in range(n - 1, -1, -1):
        x[k] = a[k, k] * 2.0
    return x
'''
    assert [s.reason for s in sites(ast.parse(source))] == [None, None]
    after = source.replace("    return x", "    x[0] = k\n    return x")
    assert any(s.reason and "used outside" in s.reason for s in sites(ast.parse(after)))
    closure = source.replace("        x[k] = a[k, k] * 2.0", "        x[k] = a[k, k] * 2.0\n        g = lambda: k")
    assert any(s.reason for s in sites(ast.parse(closure)))
    a = np.arange(16.0).reshape(4, 4)
    x = np.zeros(4)
    want = plain(source)["f"](a.copy(), x.copy(), 4)
    got = compiled(source)["f"](a.copy(), x.copy(), 4)
    assert same_bits(want, got) and calls() == (2, 0)
