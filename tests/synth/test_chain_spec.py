"""A chain built on the fly is the spec a person writes: the same Problem as specs/*.yaml."""
from pathlib import Path

import pytest

from flamefuse.errors import FlameError
from flamefuse.spec import load, load_spec_text
from flamefuse.synth.chain import KNOWN, Buffer, Chain, Step, key, problem
from flamefuse.synth.kernels import Fused, NotFused, fused

ROOT = Path(__file__).resolve().parents[2]
SPD = Chain((Buffer("A", "matrix", "symmetric"),),
            (Step("chol", (("A", "A"),)), Step("trinv", (("L", "A"),)), Step("ltl", (("L", "A"),))))


def test_spd_chain_loads_as_the_shipped_spec():
    mine = problem(SPD)
    shipped = load(ROOT / "specs" / "spd_inverse.yaml")
    assert mine.name == shipped.name == "spd_inverse"
    assert mine.operands == shipped.operands
    assert [op.tasks for op in mine.operations] == [op.tasks for op in shipped.operations]


def _yaml(chain: Chain) -> str:
    """The YAML spec a person writes for ``chain`` (the text run-time chains went through
    before they were bound directly)."""
    kinds = {"vector": "{kind: vector}", "rows": "{kind: matrix, partition: rows}"}
    lines = [f"name: {chain.name}", "description: built at run time by flamefuse.synth", "operands:"]
    lines += [f"  {b.name}: " + kinds.get(b.kind, f"{{kind: matrix, structure: {b.structure}}}")
              for b in chain.buffers]
    lines.append("operations:")
    for s in chain.steps:
        lines += [f"  - op: {s.op}"] + [f"    {formal}: {buf}" for formal, buf in s.binds]
    if chain.finish:
        lines.append("finish:")
        for kind, names in chain.finish:
            lines.append(f"  - upper_solve: {{U: {names[0]}, B: {names[1]}}}" if kind == "upper_solve"
                         else f"  - {kind}: {names[0]}")
    return "\n".join(lines) + "\n"


# the chains translate.py builds: each shipped chain, with the finish step it adds
FINISH = {"general_inverse": (("unpivot_columns", ("A",)),), "lu_solve": (("upper_solve", ("A", "B")),)}


def _chain(ops: tuple[str, ...]) -> Chain:
    from flamefuse.spec import LIBRARY
    structure = "general" if "lu" in ops else "symmetric" if "chol" in ops else "lower"
    steps = tuple(Step(op, tuple((f, "B" if x.partitions == ("rows",) else "A")
                                 for f, x in LIBRARY[op].formals.items() if x.default is None))
                  for op in ops)
    buffers = (Buffer("A", "matrix", structure), Buffer("B", "rows"))
    return Chain(buffers, steps, FINISH.get(KNOWN[ops], ())).used()


@pytest.mark.parametrize("ops", sorted(KNOWN), ids="-".join)
def test_a_chain_binds_to_the_problem_its_yaml_spec_loads_as(ops):
    """A chain's Problem is built by the binding functions the YAML loader uses, with no YAML
    text: it equals what the spec text of the chain loads as (#31 item 2)."""
    c = _chain(ops)
    assert problem(c) == load_spec_text(_yaml(c), f"<{c.name}>")


def test_a_chain_is_checked_by_the_loaders_rules():
    bad = Chain((Buffer("A", "matrix", "general"),), (Step("chol", (("A", "A"),)),))
    with pytest.raises(FlameError, match="operand A has structure 'general' but A of chol needs lower or symmetric"):
        problem(bad)


def test_key_is_structure_not_size_and_modules_load_from_the_cache():
    assert key(SPD, "x") == key(SPD, "x") != key(SPD, "y")
    f = fused(SPD)
    assert isinstance(f, Fused) and f.variant == 1 and f.module.DEFAULT_NAME == "spd_inverse_v1"


def test_no_fused_invariant_gives_the_search_explanation():
    c = Chain((Buffer("A", "matrix", "symmetric"), Buffer("B", "vector")),
              (Step("chol", (("A", "A"),)), Step("trsm_lt", (("L", "A"), ("B", "B")))))
    f = fused(c)
    assert isinstance(f, NotFused) and "cannot share one loop" in f.reason


def test_independent_operations_derive():
    """Operations whose operands no other operation uses (three Cholesky factorizations of three
    matrices) derive a loop (it raised IndexError at derive/loop.py)."""
    from flamefuse.derive import DerivedLoop, derive_solution
    from flamefuse.search.enumerate import enumerate_cpsat
    c = Chain(tuple(Buffer(x, "matrix", "symmetric") for x in "ABC"),
              tuple(Step("chol", (("A", x),)) for x in "ABC"))
    p = problem(c)
    loops = [derive_solution(p, inv) for inv in enumerate_cpsat(p)]
    assert loops and any(isinstance(loop, DerivedLoop) for loop in loops), loops


def test_an_operand_no_operation_uses_derives():
    from flamefuse.derive import DerivedLoop, derive_solution
    from flamefuse.search.enumerate import enumerate_cpsat
    text = ("name: unused\ndescription: C is not used\noperands:\n  A: {kind: matrix, structure: symmetric}\n"
            "  B: {kind: matrix, partition: rows}\n  C: {kind: matrix, structure: general}\n"
            "operations:\n  - op: chol\n    A: A\n  - op: trsm\n    L: A\n    B: B\n")
    problem = load_spec_text(text, "<unused>")
    loops = [derive_solution(problem, inv) for inv in enumerate_cpsat(problem)]
    assert loops and any(isinstance(loop, DerivedLoop) for loop in loops), loops


def test_no_fused_loop_is_remembered_in_the_cache(monkeypatch, tmp_path):
    """A warm run neither searches nor explains a chain without a fused loop again (#27 item 8)."""
    from flamefuse.cache import _usable
    from flamefuse.synth import kernels
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path))
    _usable.cache_clear()
    c = Chain((Buffer("A", "matrix", "symmetric"), Buffer("B", "vector")),
              (Step("chol", (("A", "A"),)), Step("trsm_lt", (("L", "A"), ("B", "B")))))
    monkeypatch.setattr(kernels, "_MEMO", {})
    first = fused(c)
    assert isinstance(first, NotFused)
    assert list((tmp_path / "synth").glob("*.none"))

    def no_search(chain):
        raise AssertionError("searched again")
    monkeypatch.setattr(kernels, "_emit", no_search)
    monkeypatch.setattr(kernels, "_MEMO", {})              # a new process
    again = fused(c)
    assert isinstance(again, NotFused) and again.reason == first.reason
    _usable.cache_clear()
