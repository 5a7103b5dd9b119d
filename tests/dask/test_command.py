"""``flamefuse tiles``: the CLI demo on the session's cluster (--scheduler ADDRESS) and locally."""
from __future__ import annotations

from flamefuse.cli import main


def test_tiles_on_an_existing_cluster(client, capsys, tmp_path):
    svg = tmp_path / "g.svg"
    address = client.scheduler.address
    assert main(["tiles", "spd_inverse", "--n", "96", "--chunk", "32", "--scheduler", address,
                 "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "3 x 3 tiles of 32" in out and address in out
    err = float(out.split("max error relative to flamefuse.kernels.spd_inverse: ")[1].split()[0])
    assert err < 1e-12
    text = svg.read_text()
    assert text.startswith("<svg") and text.count("<rect") == int(out.split("tile tasks: ")[1].split(",")[0])


def test_tiles_threaded_with_rhs(capsys):
    assert main(["tiles", "chol_trsm", "--n", "50", "--chunk", "16", "--rhs", "5", "--scheduler", "threads"]) == 0
    out = capsys.readouterr().out
    assert "4 x 4 tiles" in out
    assert float(out.split("flamefuse.kernels.chol_trsm: ")[1].split()[0]) < 1e-12


def test_tiles_errors_are_one_message(capsys):
    assert main(["tiles", "lu", "--n", "8", "--chunk", "4", "--scheduler", "threads"]) == 2
    err = capsys.readouterr().err
    assert "pivoting across tiles" in err and "Traceback" not in err
    assert main(["tiles", "nope", "--scheduler", "threads"]) == 2
    assert "no spec 'nope'" in capsys.readouterr().err
    assert main(["tiles", "spd_inverse", "--n", "0", "--scheduler", "threads"]) == 2
    assert main(["tiles", "spd_inverse", "--n", "8", "--chunk", "4", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
