"""``flamefuse fuse``'s command line parsed without argparse (flamefuse.cli.fuse.quick_args):
the same values as its argparse parser for every form it takes, None (argparse's turn) for
every other form."""

import pytest

from flamefuse.cli import build_parser, main
from flamefuse.cli.fuse import quick_args

TAKEN = [
    ["s.py"],
    ["s.py", "1000", "out.npz"],
    ["--no-adapt", "s.py", "3"],
    ["--wait", "--explain", "s.py"],
    ["--explain", "--no-adapt", "dir/s.py", "--explain", "-h", "--", "x"],
    ["--explain", "s.py", "--partitioner", "linear"],
    ["", "a"],
]
LEFT = [
    [], ["-h"], ["--help"], ["--partitioner", "linear", "s.py"], ["--partitioner=cluster", "s.py"],
    ["--eager-below", "0", "s.py"], ["--no-a", "s.py"], ["--expl", "s.py"], ["--", "s.py"],
    ["-x", "s.py"], ["--no-adapt"], ["--bogus", "s.py"],
]


@pytest.mark.parametrize("argv", TAKEN)
def test_the_forms_it_takes_parse_as_argparse_parses_them(argv):
    want = vars(build_parser("fuse").parse_args(["fuse", *argv]))
    got = quick_args(list(argv))
    assert got is not None and vars(got) == want


@pytest.mark.parametrize("argv", LEFT)
def test_every_other_form_is_left_to_argparse(argv):
    assert quick_args(list(argv)) is None


def test_a_missing_script_is_still_a_clear_error(tmp_path, capsys):
    assert main(["fuse", str(tmp_path / "none.py")]) == 2
    assert "no such script" in capsys.readouterr().err


def test_an_unknown_option_is_still_argparse_s_error(capsys):
    with pytest.raises(SystemExit) as err:
        main(["fuse", "--bogus", "s.py"])
    assert err.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_the_switches_hold_where_the_options_are_not_given(tmp_path):
    """``FLAMEFUSE_EAGER_BELOW`` / ``FLAMEFUSE_PARTITIONER`` are the defaults of ``--eager-below`` /
    ``--partitioner`` (the options' own defaults used to override them); an option given wins."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    script = tmp_path / "s.py"
    script.write_text("import numpy\nimport flamefuse.lazy as lazy\n"
                      "print(lazy.RECORDER.eager_below, lazy.RECORDER.partitioner)\n")
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, FLAMEFUSE_EAGER_BELOW="77", FLAMEFUSE_PARTITIONER="linear",
               FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=root)

    def fuse(*options):
        done = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", "--no-adapt", *options, str(script)],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert fuse() == ["77", "linear"]
    assert fuse("--eager-below", "5", "--partitioner", "greedy") == ["5", "greedy"]
