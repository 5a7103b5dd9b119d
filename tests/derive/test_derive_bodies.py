"""Derivation of loop bodies from invariants, against the known bodies of loop-derivation.md §6."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flamefuse.derive import DerivedLoop, NotDerivable, derive_solution
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.pme.invariant import Invariant
from flamefuse.spec import load, load_spec_text

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "tests" / "data" / "derive" / "known_bodies.md"


def known() -> dict[tuple[str, str], list[str]]:
    """(operation, variant) -> body lines, from the §6 table (copied into tests/data)."""
    rows = {}
    for line in KNOWN.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in ("chol", "trinv", "L^T L"):
            rows[(cells[0], cells[1])] = [s.strip() for s in cells[2].split(";")]
    return rows


def norm(lines) -> list[str]:
    """§6 names triangular factors L.. and updated blocks A..; derived bodies use the operand name."""
    return [re.sub(r"\b[LA](?=\d\d)", "X", s) for s in lines]


def derived(spec: str) -> list:
    problem = load(ROOT / "specs" / f"{spec}.yaml")
    return [derive_solution(problem, inv) for inv in enumerate_cpsat(problem)]


def spd_known_body() -> list[str]:
    text = KNOWN.read_text()
    body = re.search(r"its body, verified numerically, is\s*`(.*?)`", text, re.S).group(1)
    return [s.strip() for s in body.replace("\n", " ").split(";")]


def test_cholesky_all_three_equal_the_known_bodies():
    loops = derived("cholesky")
    table = known()
    assert [norm(loop.bodies[0].lines()) for loop in loops] == [
        norm(table[("chol", v)]) for v in ("{TL}", "{TL, BL}", "{TL, BL, BR0}")]
    assert all(loop.direction == "TL->BR" for loop in loops)


def test_ltl_all_three_equal_the_known_bodies():
    loops = derived("ltl")
    table = known()
    assert [norm(loop.bodies[0].lines()) for loop in loops] == [norm(table[("L^T L", v)]) for v in "123"]


def test_spd_inverse_body():
    (loop,) = derived("spd_inverse")
    assert isinstance(loop, DerivedLoop)
    assert norm(loop.update_lines()) == norm(spd_known_body())


def test_trinv_all_five_the_cancelling_one_by_algebra():
    loops = derived("trinv")
    assert all(isinstance(loop, DerivedLoop) for loop in loops)
    # past {TL, BL@0b}: BL = L_BR^{-1} L_BL; moving the boundary cancels -L21 L11^{-1} L10 in L20
    # (tests/derive/test_algebra.py)
    assert loops[2].bodies[0].lines()[-1] == "L10 := -L10 L00"
    assert loops[0].bodies[0].lines() == ["L10 := -L10 L00", "L10 := L11^{-1} L10", "L11 := inv(L11)"]
    # past {BL@0b, BR}, bottom-up: needs the solve distributed over the sum and the any-tasks reversed
    assert loops[3].direction == "BR->TL"
    assert loops[3].bodies[0].lines() == ["L10 := L11^{-1} L10", "L20 -= L21 L10", "L21 := -L21 L11^{-1}",
                                          "L11 := inv(L11)"]


def test_trinv_variant_3_solves_before_inverting():
    # §6 trinv 3: the product with the inverted L_TL~ is read as a solve with L11
    loop = derived("trinv")[1]
    assert norm(loop.bodies[0].lines()) == norm(known()[("trinv", "3")])


def test_every_fused_invariant_is_derived_or_explained():
    for spec in ("chol_trinv", "spd_inverse", "chol_trsm", "chol_solve", "trinv_trmv", "trmv_trinv",
                 "general_inverse"):
        loops = derived(spec)
        assert loops, spec
        for loop in loops:
            assert isinstance(loop, DerivedLoop) or loop.reason, spec
    assert all(isinstance(x, DerivedLoop) for s in ("chol_trinv", "chol_trsm", "chol_solve", "general_inverse")
               for x in derived(s))


def test_fused_body_is_the_concatenation_in_operation_order():
    loop = derived("chol_trsm")[4]
    assert [b.operation for b in loop.bodies] == ["chol", "trsm"]
    assert loop.lines() == [
        "traverse TL->BR",
        "chol: invariant {op A_TL~ = chol(A_TL); A_BL~ = A_BL / A_TL~'; A_BR@0 = A_BR - A_BL~ * A_BL~'}",
        "  A11 := chol(A11)", "  A21 := A21 A11^{-T}", "  A22 -= A21 A21^T",
        "trsm: invariant {op B_T~ = A_TL \\ B_T; B_B@0 = B_B - A_BL * B_T~}",
        "  B1 := A11^{-1} B1", "  B2 -= A21 B1"]


def test_bottom_up_invariant_traverses_br_to_tl():
    loop = derived("trinv_trmv")[1]
    assert loop.direction == "BR->TL"
    assert loop.bodies[0].lines() == ["R11 := L11", "R11 := inv(R11)", "R21 := L21", "R21 := -R21 L11^{-1}",
                                      "R21 := L22^{-1} R21"]


def test_operations_in_different_directions_are_rejected():
    problem = load(ROOT / "specs" / "trmv_trinv.yaml")
    # trmv grows its top part, trinv (past = its BR task only) its bottom part
    result = derive_solution(problem, Invariant(((0, 3), (4,))))
    assert isinstance(result, NotDerivable)
    assert "different directions" in result.reason


def test_sylvester_all_sixteen_with_two_dimension_classes():
    """C's rows move with A and its columns with B: each its own way (BL->TR: rows up, columns right)."""
    loops = derived("sylvester")
    assert len(loops) == 16 and all(isinstance(x, DerivedLoop) for x in loops)
    assert {x.direction for x in loops} == {"BL->TR", "TL->BR", "BR->TL"}
    assert loops[0].direction == "BL->TR"
    assert loops[0].bodies[0].lines() == [
        "C21 -= C20 B01", "C10 -= A12 C20", "C21 := sylv(A22, B11, C21)", "C11 -= A12 C21",
        "C10 := sylv(A11, B00, C10)", "C11 -= C10 B01", "C11 := sylv(A11, B11, C11)"]


def test_explicit_tasks_have_no_exact_semantics():
    problem = load_spec_text("""
name: scale
operands:
  b: {kind: vector}
operations:
  - name: scale
    tasks:
      - op b_T~ = 2 * b_T
      - op b_B~ = 2 * b_B
""")
    result = derive_solution(problem, enumerate_cpsat(problem)[0])
    assert isinstance(result, NotDerivable) and "exact" in result.reason


def test_pivoted_lu_bodies_factor_the_panel():
    """Variants 3-5 pivot (the panel [A11; A21] at once, then the row swaps); 1-2 cannot."""
    loops = derived("lu")
    assert [isinstance(x, DerivedLoop) for x in loops] == [False, False, True, True, True]
    assert all("partial pivoting" in x.reason for x in loops[:2])
    panel = "[A11; A21], p1 := lu_piv([A11; A21]); the other columns' rows := P(p1) rows"
    assert loops[4].bodies[0].lines() == [panel, "A12 := unit_lower(A11)^{-1} A12", "A22 -= A21 A12"]
    # Crout: the update of A12 waits for the row swaps
    assert loops[3].bodies[0].lines() == ["A11 -= A10 A01", "A21 -= A20 A01", panel, "A12 -= A10 A02",
                                          "A12 := unit_lower(A11)^{-1} A12"]


@pytest.mark.parametrize("spec", ["lu_nopiv", "ul", "trinv_unit", "triuinv", "trsm", "trsv", "trmv"])
def test_single_library_operations(spec):
    loops = derived(spec)
    assert loops
    for loop in loops:
        assert isinstance(loop, DerivedLoop)
