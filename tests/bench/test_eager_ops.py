"""benchmarks/eager_ops.py (per-operation cost of the eager path) runs every operation on NumPy and
lazy operands and leaves the process's settings as they were; benchmarks/runtime.py keeps the
page's eager-path section when it rewrites docs/runtime-performance.md."""
import sys

from flamefuse.cli.bench import BENCH_DIR
from flamefuse.files import import_file
from flamefuse.lazy.recorder import RECORDER
from flamefuse.runtime import adapt

sys.path.insert(0, str(BENCH_DIR))
eager_ops = import_file(BENCH_DIR / "eager_ops.py", "flamefuse_bench_eager_ops")


def test_every_operation_is_timed_and_settings_are_restored():
    before = RECORDER.eager_below, adapt.STATE.learning
    rows = eager_ops.measure([10, 40], number=3, repeat=1, learning=True)
    assert [(n, op) for n, op, _, _ in rows] == [(n, op) for n in (10, 40) for op in eager_ops.OPS]
    assert all(t_np > 0 and t_lz > 0 for _, _, t_np, t_lz in rows)
    assert (RECORDER.eager_below, adapt.STATE.learning) == before


def test_runtime_bench_keeps_the_eager_section(tmp_path):
    runtime = import_file(BENCH_DIR / "runtime.py", "flamefuse_bench_runtime")
    page = tmp_path / "page.md"
    page.write_text("# old\n\n## Notes\n\nold\n\n" + runtime.KEPT_HEADING + "\n\n| a |\n")
    assert runtime.kept_sections(page) == "\n" + runtime.KEPT_HEADING + "\n\n| a |\n"
    page.write_text("# old\n")
    assert runtime.kept_sections(page) == ""
    assert runtime.kept_sections(tmp_path / "missing.md") == ""
