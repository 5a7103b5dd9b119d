"""benchmarks/startup.py --own: flamefuse's own CPU time inside a ``flamefuse fuse`` process
(start-up, exit), read from the wrapper's last line; the script's own output is untouched."""
import os
import subprocess
import sys

from flamefuse.cli.bench import BENCH_DIR
from flamefuse.files import import_file

sys.path.insert(0, str(BENCH_DIR))
startup = import_file(BENCH_DIR / "startup.py", "flamefuse_bench_startup")
ROOT = str(BENCH_DIR.parent)


def test_the_wrapper_reports_flamefuses_own_start_up_and_exit(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(startup.timed_text(startup.SCRIPTS["plain"]))
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    for _ in range(2):                  # learning, then settled
        r = subprocess.run([sys.executable, "-c", startup.OWN, str(script)], capture_output=True,
                           text=True, env=env, cwd=ROOT, timeout=600)
        assert r.returncode == 0, r.stderr
        assert r.stdout == want.stdout
        start, end = startup.own_times(r.stderr)
        assert 0 < start < 10_000 and 0 <= end < 10_000


def test_the_own_table_gives_medians_and_lower_quartiles():
    samples = {"plain": {"a": [(3.0, 0.1), (1.0, 0.3), (2.0, 0.2), (9.0, 0.4)]}}
    text = startup.report_own(samples, ["a"])
    assert "| plain | a | 2.50 (2.00) | 0.25 (0.20) |" in text


def test_the_own_table_says_how_many_runs_ran_as_plain_numpy():
    """A "fused" row measured on runs that adaptive fusion made plain NumPy is not a fused
    start-up (the script's probe counts start-up since 1d3ce89: the bench's fused script went
    plain until its runs were given the probe's test hook, SETTLE)."""
    samples = {"fused": {"a": [(3.0, 0.1, True), (1.0, 0.3, False), (2.0, 0.2, False)]}}
    assert "| fused | a | 2.00 (1.00) | 0.20 (0.10) | 1 of 3 |" in startup.report_own(samples, ["a"])
    assert startup.SETTLE["fused"] == {"FLAMEFUSE_PROBE_SECONDS": "0.01,0.03"}
