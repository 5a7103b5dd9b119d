"""A fused script's clock read is a sync point (flamefuse.lazy.clock): the work recorded before
``time.perf_counter()`` has run when it returns, so a timed region is charged its own work."""
import sys
import time

import numpy as np

from flamefuse.cli import main

SCRIPT = """
import numpy as np
import time
from time import perf_counter as pc
from flamefuse.lazy.recorder import RECORDER

x = np.linspace(0.0, 1.0, 100_000)
y = np.sin(x) * 2.0 + x
pending = [len(RECORDER.ops)]
t0 = time.perf_counter()
pending.append(len(RECORDER.ops))
z = y * 3.0 - 1.0
pending.append(len(RECORDER.ops))
pc()
pending.append(len(RECORDER.ops))
time.sleep(0)
print(pending, time.strftime("%Y", time.gmtime(0)), float(z.sum()))
"""


def test_a_clock_read_runs_the_pending_work(tmp_path, capsys):
    script = tmp_path / "timed.py"
    script.write_text(SCRIPT)
    assert main(["fuse", "--no-adapt", "--eager-below", "0", str(script)]) == 0
    out = capsys.readouterr().out.split()
    x = np.linspace(0.0, 1.0, 100_000)
    want = float(((np.sin(x) * 2.0 + x) * 3.0 - 1.0).sum())
    # recorded before each clock read, none pending after it; the rest of `time` is the real one's
    assert out[0:4] == ["[3,", "0,", "2,", "0]"]
    assert out[4] == "1970"
    assert abs(float(out[5]) / want - 1) < 1e-12


def test_flamefuse_itself_reads_the_real_clock(tmp_path, capsys):
    script = tmp_path / "plain_clock.py"
    script.write_text("import numpy as np\nimport time\nprint(time.perf_counter.__module__)\n")
    assert main(["fuse", "--no-adapt", str(script)]) == 0
    assert capsys.readouterr().out.strip() == "flamefuse.lazy.clock"     # the script's
    assert sys.modules["time"] is time and type(time.perf_counter) is type(len)   # everyone else's
