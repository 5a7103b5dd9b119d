"""A chain built on the fly is the spec a person writes: the same Problem as specs/*.yaml."""
from pathlib import Path

from flamefuse.spec import load, load_spec_text
from flamefuse.synth.chain import Buffer, Chain, Step, key, spec_text
from flamefuse.synth.kernels import Fused, NotFused, fused

ROOT = Path(__file__).resolve().parents[2]
SPD = Chain((Buffer("A", "matrix", "symmetric"),),
            (Step("chol", (("A", "A"),)), Step("trinv", (("L", "A"),)), Step("ltl", (("L", "A"),))))


def test_spd_chain_loads_as_the_shipped_spec():
    mine = load_spec_text(spec_text(SPD), "<synth>")
    shipped = load(ROOT / "specs" / "spd_inverse.yaml")
    assert mine.name == shipped.name == "spd_inverse"
    assert mine.operands == shipped.operands
    assert [op.tasks for op in mine.operations] == [op.tasks for op in shipped.operations]


def test_key_is_structure_not_size_and_modules_load_from_the_cache():
    assert key(SPD, "x") == key(SPD, "x") != key(SPD, "y")
    f = fused(SPD)
    assert isinstance(f, Fused) and f.variant == 1 and f.module.DEFAULT_NAME == "spd_inverse_v1"


def test_no_fused_invariant_gives_the_search_explanation():
    c = Chain((Buffer("A", "matrix", "symmetric"), Buffer("B", "vector")),
              (Step("chol", (("A", "A"),)), Step("trsm_lt", (("L", "A"), ("B", "B")))))
    f = fused(c)
    assert isinstance(f, NotFused) and "cannot share one loop" in f.reason
