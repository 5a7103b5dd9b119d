"""An ``any(...)`` input never reads a region an earlier operation has not finished.

Cholesky then the triangular inverse into a second matrix (the chain ``flamefuse fuse``
builds for ``L = cholesky(A); Li = inv(L)`` with ``L`` still used): the search's rules 1
and 6 accept invariant 3 (trinv's ``B_BL@0a = -(any(B_BL@0b, A_BL) * B_TL~)`` past while
chol has not computed A_BL) with each rule met by a different option; its body read the
unfactored A21 and returned a wrong inverse. It is now reported as not derived, and every
variant that is emitted computes inv(chol(A)).
"""
import numpy
import pytest

from flamefuse.codegen import default_variant, emit_module, load_generated, shipped
from flamefuse.derive import NotDerivable, derive_solution
from flamefuse.pipeline import synthesize
from flamefuse.search.enumerate import enumerate_cpsat
from flamefuse.spec import load_spec_text

SPEC = """\
name: chol_trinv
description: Cholesky, then the inverse of the factor into a second matrix
operands:
  A: {kind: matrix, structure: symmetric}
  B: {kind: matrix, structure: lower}
operations:
  - op: chol
    A: A
  - op: trinv
    L: A
    R: B
"""


@pytest.fixture(scope="module")
def problem():
    return load_spec_text(SPEC, "<chol_trinv out of place>")


@pytest.fixture(scope="module")
def invariants(problem):
    return enumerate_cpsat(problem)


def test_the_invariant_reading_an_unfinished_region_is_not_derived(problem, invariants):
    assert len(invariants) == 6          # the search's answer is unchanged (reference semantics)
    loops = [derive_solution(problem, inv) for inv in invariants]
    refused = [k for k, loop in enumerate(loops, 1) if isinstance(loop, NotDerivable)]
    assert refused == [3]
    assert "a_bl still waits for an earlier operation's future tasks" in loops[2].reason


def test_every_emitted_variant_computes_the_inverse_factor(problem, invariants, tmp_path):
    path = tmp_path / "chol_trinv_oop.py"
    path.write_text(emit_module(synthesize(problem, invariants=invariants)))
    mod = load_generated(path)
    assert "chol_trinv_v3" in mod.NOT_DERIVED and "chol_trinv_v3" not in mod.VARIANTS
    rng = numpy.random.default_rng(4)
    for n, nb in ((13, 4), (9, 2), (5, 8)):
        x = rng.standard_normal((n, n))
        a = x @ x.T + n * numpy.eye(n)
        want = numpy.linalg.inv(numpy.linalg.cholesky(a))
        for name, fn in mod.VARIANTS.items():
            A, B = numpy.asfortranarray(a.copy()), numpy.zeros((n, n), order="F")
            assert fn(A, B, block_size=nb) == 0
            assert numpy.abs(numpy.tril(B) - want).max() <= 1e-12 * numpy.linalg.cond(a), (name, n, nb)


def test_a_measured_default_applies_to_the_shipped_spec_only(problem, invariants):
    assert not shipped(problem)
    from flamefuse.codegen.variants import FASTEST
    measured = FASTEST["chol_trinv"][0]           # recorded for specs/chol_trinv.yaml
    made = [(measured, 1, None), ("chol_trinv_vX", 5, None)]
    assert default_variant("chol_trinv", made)[0] == measured
    name, how = default_variant("chol_trinv", made, measured=False)
    assert (name, how.startswith("the variant with the most past tasks")) == ("chol_trinv_vX", True)
