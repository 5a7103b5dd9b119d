"""The algebraic path (SymPy block algebra): cancelling updates, and agreement with the mechanical path."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import sympy as sp

from flamefuse.derive import DerivedLoop, derive_solution
from flamefuse.derive.algebra import algebraic_update, check
from flamefuse.derive.blocks import Blk, render
from flamefuse.derive.evaluate import Unsupported
from flamefuse.derive.loop import DIRECTIONS, OPTIONS, direction, fine, schedule
from flamefuse.derive.values import Val, original, same
from flamefuse.pme.model import with_const_tasks
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load

ROOT = Path(__file__).resolve().parents[2]


def loops(spec):
    problem = load(ROOT / "specs" / f"{spec}.yaml")
    return [derive_solution(problem, inv) for inv in enumerate_cpsat(problem)]


@pytest.mark.parametrize("spec,count", [("trinv", 5), ("trinv_unit", 5), ("triuinv", 5), ("trmv_trinv", 6),
                                        ("trinv_trmv", 7)])
def test_cancelling_invariants_are_derived(spec, count):
    got = loops(spec)
    assert len(got) == count
    assert all(isinstance(x, DerivedLoop) for x in got), [getattr(x, "reason", "") for x in got]


def test_trinv_cancelling_body():
    # past {TL, BL@0b}: before the step L10 = L11^{-1} L10 and L20 = L22^{-1}(L20 - L21 L10);
    # after it L10 = -L11^{-1} L10 L00^{-1} and L20 = L22^{-1} L20: the term L21 L10 cancels
    loop = loops("trinv")[2]
    assert loop.direction == "TL->BR"
    assert loop.bodies[0].lines() == ["L11 := inv(L11)", "L21 := L22^{-1} L21", "L20 += L21 L10",
                                      "L10 := -L10 L00"]


def test_sympy_proves_the_cancellation_and_rejects_a_wrong_sign():
    L10, L11, L20, L21, L22 = (original(Blk("L", i, j)) for i, j in ((1, 0), (1, 1), (2, 0), (2, 1), (2, 2)))
    before = Val(L22.sym.I * (L20.sym - L21.sym * L11.sym.I * L10.sym),
                 _inv(L22.num) @ (L20.num - L21.num @ _inv(L11.num) @ L10.num))
    r21 = _inv(L22.num) @ L21.num
    r10 = _inv(L11.num) @ L10.num
    updated = Val(before.sym + (L22.sym.I * L21.sym) * (L11.sym.I * L10.sym), before.num + r21 @ r10)
    goal = Val(L22.sym.I * L20.sym, _inv(L22.num) @ L20.num)
    assert same(updated, goal)
    wrong = Val(before.sym - (L22.sym.I * L21.sym) * (L11.sym.I * L10.sym), before.num - r21 @ r10)
    assert not same(wrong, goal)
    assert isinstance((updated.sym - goal.sym).expand().doit(), (sp.ZeroMatrix, type(sp.S.Zero)))


def _inv(m):
    import numpy as np
    return np.linalg.inv(m)


def _mechanical(spec):
    """(before, after, start, end, mechanical update in order) of every body the mechanical rule derives."""
    problem = load(ROOT / "specs" / f"{spec}.yaml")
    full = with_const_tasks(problem)
    for inv in enumerate_cpsat(problem):
        if not isinstance(derive_solution(problem, inv), DerivedLoop):
            continue
        for op, past in zip(full.operations, inv.past):
            real = tuple(k for k in past if op.tasks[k].kind != "const")
            d = direction(full, op, real)
            for opts in OPTIONS:
                b, start = fine(full, op, real, list(zip(*DIRECTIONS[d]))[0], opts)
                a, end = fine(full, op, real, list(zip(*DIRECTIONS[d]))[1], opts)
                if any(t not in set(a) for t in b):
                    continue
                try:
                    yield b, a, start, end, schedule([t for t in a if t not in set(b)], start)
                    break
                except Unsupported:
                    continue


@pytest.mark.parametrize("spec", ["cholesky", "chol_trsm", "chol_solve", "ltl", "lu_nopiv", "trsm"])
def test_algebra_gives_the_mechanical_bodies(spec):
    """Forced through the algebra, every block the mechanical rule updates with gemm/trsm/trmm gets
    the same update (same lines), proved equal by SymPy and checked on numbers.  (For trinv the
    algebra may pick another, equally valid body: the sign on the gemm instead of the trsm.)"""
    n = 0
    for b, a, start, end, mech in _mechanical(spec):
        force = {t.target for t in mech} - {t.target for t in mech if t.kind not in ("acc", "trsm", "trmm")}
        update = schedule(algebraic_update(b, a, start, end, force=force), start)
        check(b, a, start, end, update)
        assert sorted(render(t) for t in update) == sorted(render(t) for t in mech)
        n += 1
    assert n >= 2


def test_check_rejects_a_wrong_update():
    b, a, start, end, mech = next(_mechanical("chol_trsm"))
    check(b, a, start, end, mech)
    k = next(k for k, t in enumerate(mech) if t.kind == "acc")
    bad = list(mech)
    bad[k] = replace(mech[k], alpha=-mech[k].alpha)
    with pytest.raises(Unsupported, match="leaves"):
        check(b, a, start, end, bad)
