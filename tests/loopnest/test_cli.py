"""``flamefuse loopnest KERNEL`` prints the schedule and explains cuts."""
from flamefuse.cli import main


def test_atax_explains_why_it_cannot_fuse_fully(capsys):
    assert main(["loopnest", "atax"]) == 0
    out = capsys.readouterr().out
    assert "loop 0 over n: S0.i, S1.j" in out
    assert "level 1: S1 not fused with S0" in out and "flow dependence S0 -> S1 on tmp" in out


def test_exact_bicg_is_sequential_with_source(capsys):
    assert main(["loopnest", "bicg", "--exact", "--source"]) == 0
    out = capsys.readouterr().out
    assert "-> sequential: flow dependence S1 -> S1 on s is carried" in out
    assert "def kernel(" in out and "fastmath" not in out


def test_unknown_kernel(capsys):
    assert main(["loopnest", "nope"]) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err
