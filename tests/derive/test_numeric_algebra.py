"""The block algebra decided on numbers (random instantiations) agrees with SymPy's proofs.

Default: ``same`` accepts a candidate update when the numbers agree on the first
instantiation (where the candidate was found) and on further ones drawn
independently of it (other seeds, other sizes).  ``FLAMEFUSE_DERIVE_PROVE=1``
also asks SymPy.  Here every shipped spec and every reference problem is derived
both ways: the loops are the same, and on every candidate the algebra looked at
the numbers' verdict is SymPy's, with a wide gap between the agreement of true
identities and the disagreement of false ones.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flamefuse.derive import DerivedLoop, algebra, derive_solution
from flamefuse.derive.blocks import Blk, FineTask, Ref
from flamefuse.derive.values import TWINS, Tag, Val, Values, _gap, agree, each, proved, same, sylvester
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = sorted((ROOT / "specs").glob("*.yaml")) + sorted((ROOT / "tests" / "core" / "data").glob("*.txt"))


def _derived(problem):
    return [derive_solution(problem, inv) for inv in enumerate_cpsat(problem)]


@pytest.fixture(scope="module")
def both_ways():
    """Per problem: (loops decided by numbers, loops proved by SymPy too)."""
    mp = pytest.MonkeyPatch()
    out = {}
    try:
        for path in PROBLEMS:
            problem = load(path)
            mp.delenv("FLAMEFUSE_DERIVE_PROVE", raising=False)
            numeric = _derived(problem)
            mp.setenv("FLAMEFUSE_DERIVE_PROVE", "1")
            out[path.name] = (numeric, _derived(problem))
    finally:
        mp.undo()
    return out


@pytest.mark.parametrize("name", [p.name for p in PROBLEMS])
def test_numbers_and_sympy_derive_the_same_loops(both_ways, name):
    numeric, symbolic = both_ways[name]
    assert numeric == symbolic


STRIDE = 9            # every 9th candidate: a few hundred SymPy proofs


@pytest.mark.parametrize("spec", ["trinv_unit", "triuinv"])
def test_numbers_and_sympy_agree_on_the_candidates(spec, monkeypatch):
    """Not only the first: candidates the search meets (every STRIDE-th, all matching the first
    instantiation by construction) are accepted by the further instantiations exactly when SymPy
    proves them, with rounding-level gaps; except candidates that add and subtract the same
    product (``+ P P - P P``), identities SymPy leaves unproved (it writes one ``(P)**2`` and
    the other a product, and does not cancel them)."""
    monkeypatch.setenv("FLAMEFUSE_DERIVE_PROVE", "1")
    seen = []
    find = algebra.Search.find

    def judging(self, blk, cur, goal):
        for k, steps in enumerate(self.candidates(blk, cur, goal)):
            if k % STRIDE == 0:
                x = self.result(steps, cur)
                seen.append((agree(x, goal), proved(x, goal) or _cancelling(steps),
                             max(_gap(a, b) for a, b in zip(x.alt, goal.alt))))
        return find(self, blk, cur, goal)

    monkeypatch.setattr(algebra.Search, "find", judging)
    assert all(isinstance(x, DerivedLoop) for x in _derived(load(ROOT / "specs" / f"{spec}.yaml")))
    assert len(seen) >= 50
    assert [(n, s) for n, s, _ in seen if n != s] == []
    assert max(g for n, _, g in seen if n) < 1e-12


def _cancelling(steps) -> bool:
    """Two gemm steps with the same factors and opposite signs."""
    accs = [(alpha, facs) for kind, _, alpha, facs in steps if kind == "acc"]
    return any(a == -b and f == g for k, (a, f) in enumerate(accs) for b, g in accs[k + 1:])


def _twin_values():
    return Values(symbolic=False, twins=len(TWINS))


def test_kernels_the_first_instantiation_confuses_are_told_apart():
    """On the first instantiation every opaque kernel is tanh(X) + I, so chol(X) and lu(X) have the
    same numbers there; the further instantiations draw a function per kernel."""
    vals = _twin_values()
    x = vals[Ref(Blk("A", 1, 1), frozenset())]
    chol = vals.apply(FineTask("chol", Blk("A", 1, 1), frozenset()), x)
    lu = vals.apply(FineTask("lu", Blk("A", 1, 1), frozenset()), x)
    assert np.array_equal(chol.num, lu.num) and len(chol.alt) == len(TWINS)
    assert not same(chol, lu)
    again = vals.apply(FineTask("chol", Blk("A", 1, 1), frozenset()), Val(Tag(), x.num.copy(), x.alt))
    assert same(chol, again)                         # the same kernel of the same value


def test_a_cancellation_is_accepted_and_a_wrong_sign_rejected_on_numbers():
    """trinv's cancellation L22^{-1} (L20 - L21 L11^{-1} L10) + (L22^{-1} L21)(L11^{-1} L10) = L22^{-1} L20,
    decided on numbers alone."""
    vals = _twin_values()
    L10, L11, L20, L21, L22 = (vals[Ref(Blk("L", i, j), frozenset())] for i, j in ((1, 0), (1, 1), (2, 0),
                                                                                    (2, 1), (2, 2)))
    inv = np.linalg.inv
    before = Val(Tag(), *each(lambda _, l10, l11, l20, l21, l22: inv(l22) @ (l20 - l21 @ inv(l11) @ l10),
                              L10, L11, L20, L21, L22))
    term = each(lambda _, l10, l11, l21, l22: (inv(l22) @ l21) @ (inv(l11) @ l10), L10, L11, L21, L22)
    goal = Val(Tag(), *each(lambda _, l20, l22: inv(l22) @ l20, L20, L22))
    plus = Val(Tag(), before.num + term[0], tuple(a + b for a, b in zip(before.alt, term[1])))
    minus = Val(Tag(), before.num - term[0], tuple(a - b for a, b in zip(before.alt, term[1])))
    assert same(plus, goal) and not same(minus, goal)


def test_a_wrong_value_matching_only_the_first_instantiation_is_rejected():
    vals = _twin_values()
    x = vals[Ref(Blk("A", 1, 0), frozenset())]
    fake = Val(Tag(), x.num.copy(), tuple(m + 1e-6 * np.ones_like(m) for m in x.alt))
    assert agree(x, x) and not same(x, fake)


def test_numbers_alone_need_a_further_instantiation():
    x = Values(symbolic=False)[Ref(Blk("A", 1, 1), frozenset())]
    with pytest.raises(ValueError, match="further instantiation"):
        same(x, x)


@pytest.mark.parametrize("m,n", [(3, 3), (3, 2), (2, 3), (4, 3), (5, 4)])
def test_sylvester_solves_as_scipy(m, n):
    from scipy.linalg import solve_sylvester
    rng = np.random.default_rng(m * 10 + n)
    a = np.triu(rng.standard_normal((m, m))) + 2 * np.eye(m)
    b = np.triu(rng.standard_normal((n, n))) + 2 * np.eye(n)
    q = rng.standard_normal((m, n))
    x = sylvester(a, b, q)
    assert np.allclose(a @ x + x @ b, q, rtol=0, atol=1e-12)
    assert np.allclose(x, solve_sylvester(a, b, q), rtol=1e-12, atol=1e-12)
