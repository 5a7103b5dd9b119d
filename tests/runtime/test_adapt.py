"""Adaptive fusion (:mod:`flamefuse.runtime.adapt`): a script that fusing does not pay for runs as
plain NumPy from its second run on, one that it pays for stays fused, a mixed one runs its
unprofitable sites as NumPy; every result is NumPy's."""
import json
import os
import subprocess
import sys
import textwrap

import numpy

from flamefuse.runtime import adapt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCALAR_LOOP = """
import numpy as np
n = 60
rng = np.random.default_rng(0)
M = rng.standard_normal((n, n))
A = M @ M.T + n * np.eye(n)
for i in range(n):
    for j in range(i):
        A[i, j] -= np.dot(A[i, :j], A[j, :j])
        A[i, j] /= A[j, j]
    A[i, i] -= np.dot(A[i, :i], A[i, :i])
    A[i, i] = np.sqrt(A[i, i])
np.save(OUT, np.tril(A))
"""

ELEMENTWISE = """
import numpy as np
x = np.linspace(0.0, 1.0, 400_000)
y = np.sin(x) * 2.0 + x * x
for _ in range(5):
    y = (y - 1.0) / 3.0 + np.cos(x)
np.save(OUT, y)
"""

MIXED = """
import numpy as np
big = np.linspace(0.0, 1.0, 400_000)
acc = np.zeros(4)
for k in range(3000):
    acc[k % 4] += 1.0
for _ in range(4):
    big = np.sqrt(big * big + 1.0) - 0.5
print(type(acc).__name__, type(big).__name__)
np.save(OUT, np.concatenate([acc, np.asarray(big)]))
"""


def _run(tmp_path, source, *extra, adapt_on="1"):
    script = tmp_path / "s.py"
    out = tmp_path / "out.npy"
    script.write_text(f"OUT = {str(out)!r}\n" + textwrap.dedent(source))
    env = dict(os.environ, FLAMEFUSE_CACHE_DIR=str(tmp_path / "cache"), FLAMEFUSE_ADAPT=adapt_on,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "flamefuse.cli", "fuse", *extra, str(script)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return numpy.load(out), r.stdout, r.stderr


def _numpy(tmp_path, source):
    out = tmp_path / "want.npy"
    namespace = {"OUT": str(out)}
    exec(textwrap.dedent(source), namespace)
    return numpy.load(out)


def test_scalar_loop_runs_as_numpy_from_the_second_run(tmp_path):
    want = _numpy(tmp_path, SCALAR_LOOP)
    first, _, err1 = _run(tmp_path, SCALAR_LOOP, "--explain")
    assert "adapt: next run as plain NumPy" in err1
    second, _, err2 = _run(tmp_path, SCALAR_LOOP)
    assert "ran as plain NumPy" in err2
    numpy.testing.assert_array_equal(second, want)        # NumPy itself ran it
    numpy.testing.assert_allclose(first, want, rtol=1e-12, atol=1e-12)
    third, _, err3 = _run(tmp_path, SCALAR_LOOP, "--no-adapt")   # forced: fused, learns again
    assert "ran as plain NumPy" not in err3 and "operations recorded" in err3
    numpy.testing.assert_allclose(third, want, rtol=1e-12, atol=1e-12)


def test_elementwise_script_stays_fused(tmp_path):
    want = _numpy(tmp_path, ELEMENTWISE)
    for _ in range(2):
        got, _, err = _run(tmp_path, ELEMENTWISE)
        assert "ran as plain NumPy" not in err and "blocks" in err
        numpy.testing.assert_allclose(got, want, rtol=1e-13)


def test_mixed_script_runs_its_small_site_as_numpy(tmp_path):
    want = _numpy(tmp_path, MIXED)
    _, out1, _ = _run(tmp_path, MIXED)
    assert out1.split() == ["LazyArray", "LazyArray"]
    got, out2, err2 = _run(tmp_path, MIXED)
    assert out2.split() == ["ndarray", "LazyArray"], err2       # the counter array is NumPy's
    numpy.testing.assert_allclose(got, want, rtol=1e-14)


MESHGRID = """
import numpy as np
i, j = np.meshgrid(np.arange(700), np.arange(700), indexing="ij")
A = (i + j) * 0.5
for _ in range(6):
    A[1:-1, 1:-1] = 0.25 * (A[2:, 1:-1] + A[:-2, 1:-1] + A[1:-1, 2:] + A[1:-1, :-2])
print(type(A).__name__)
np.save(OUT, A)
"""


def test_arrays_made_from_a_numpy_function_stay_fused(tmp_path):
    """The line of ``meshgrid`` has nothing measured (its arrays' work is the next line's): made
    NumPy's, every array derived from it would have been plain NumPy too (heat_3d lost 6x)."""
    want = _numpy(tmp_path, MESHGRID)
    for _ in range(2):
        got, out, err = _run(tmp_path, MESHGRID)
        assert out.split() == ["LazyArray"], err
    numpy.testing.assert_array_equal(got, want)


def test_a_changed_script_is_learned_again(tmp_path):
    _run(tmp_path, SCALAR_LOOP)
    _, _, err = _run(tmp_path, SCALAR_LOOP + "\n# changed\n")
    assert "ran as plain NumPy" not in err


def test_adapt_off_never_runs_plain(tmp_path):
    for _ in range(2):
        _, _, err = _run(tmp_path, SCALAR_LOOP, adapt_on="0")
        assert "ran as plain NumPy" not in err
    assert not (tmp_path / "cache" / "adapt").exists() or not any((tmp_path / "cache" / "adapt").iterdir())


def test_damaged_decisions_are_ignored(tmp_path):
    from flamefuse.store import payload
    _run(tmp_path, SCALAR_LOOP)
    for f in (tmp_path / "cache" / "adapt").glob("[0-9a-f]*.json"):
        f.write_text('{"format": 2, "mode": "numpy", "numpy_sites": 5, "fused_s": 1, "numpy_s": 0}')
    _, _, err = _run(tmp_path, SCALAR_LOOP)
    assert "ran as plain NumPy" not in err
    for f in (tmp_path / "cache" / "adapt").glob("[0-9a-f]*.json"):
        assert json.loads(payload(f))["mode"] == "numpy"       # learned again


def test_a_slow_flush_makes_a_site_numpy():
    fast, slow = adapt.Tally(), adapt.Tally()
    adapt.charge_flush({fast: [6, 6_000_000, 0.004]}, 0.0015)   # 1.5 ms for NumPy's 4 ms
    adapt.charge_flush({slow: [6, 60_000, 0.00004]}, 0.002)     # 2 ms for NumPy's 40 us
    assert adapt.decide({("s.py", 2): fast})["mode"] == "fused"
    assert adapt.decide({("s.py", 2): slow})["mode"] == "numpy"
    cold = adapt.Tally()
    adapt.charge_flush({cold: [6, 6_000_000, 0.004]}, None)     # compiled: charged by the model
    assert adapt.decide({("s.py", 2): cold})["mode"] == "fused"


def test_numpy_cost_per_element_is_timed_per_operation(monkeypatch):
    """NumPy's own call of the operation on scratch arrays of the next power of two elements (at
    least 4096, at most SAMPLE_MAX), the less disturbed of two calls, per element. The clock is
    injected (its bounds were a timed assertion: 1e-7 s per element for an add, under load);
    the calls themselves run."""
    from flamefuse import timing
    monkeypatch.setattr(adapt, "_PER_ELEMENT", {})
    monkeypatch.setattr(adapt, "_MEASURED", set())
    calls, real = [], timing.seconds

    def seconds(fn, *args):
        real(fn, *args)                                 # NumPy's call, on its scratch arrays
        calls.append((fn, [numpy.shape(a) for a in args]))
        return 0.004 if len(calls) % 2 else 0.002       # two calls: the second less disturbed
    monkeypatch.setattr(timing, "seconds", seconds)
    add = adapt.per_element("ew", "add", ("float64", "float64", "float64"), 5000)
    sin = adapt.per_element("ew", "sin", ("float64", "float64"), 5000)
    big = adapt.per_element("ew", "ipow2", ("float64", "float64"), 10**8)
    assert add == sin == 0.002 / 8192 and big == 0.002 / adapt.SAMPLE_MAX
    assert calls == [(numpy.add, [(8192,), (8192,)])] * 2 + [(numpy.sin, [(8192,)])] * 2 + \
        [(numpy.power, [(adapt.SAMPLE_MAX,), ()])] * 2
    assert adapt.per_element("ew", "add", ("float64", "float64", "float64"), 6000) == add   # timed once
    assert len(calls) == 6
    monkeypatch.setattr(timing, "seconds", real)                # the real clock: new keys timed
    assert adapt.per_element("reduce", "sum", ("float64", "float64"), 100) > 0
    assert adapt.per_element("ew", "ipow2", ("float64", "float64"), 10**7) > 0
    assert adapt.per_element("ew", "no_such_op", ("float64", "float64"), 10) > 0


def test_decide_weighs_overhead_against_gain():
    small, big = adapt.Tally(), adapt.Tally()
    small.eager = 1000
    big.recorded, big.flushes_numpy_s, big.flushes_fused_s = 10, 0.006, 0.001
    d = adapt.decide({("s.py", 3): small, ("s.py", 9): big})
    assert d["mode"] == "fused" and d["numpy_sites"] == [["s.py", 3]]
    d = adapt.decide({("s.py", 3): small})
    assert d["mode"] == "numpy"
    d = adapt.decide({("s.py", 9): big}, keep=frozenset({("s.py", 1)}))
    assert d["numpy_sites"] == [["s.py", 1]] and d["mode"] == "fused"
    # a site with nothing measured gets no decision; alone with a NumPy site: plain NumPy
    d = adapt.decide({("s.py", 2): adapt.Tally(), ("s.py", 9): big})
    assert d["numpy_sites"] == [] and d["mode"] == "fused"
    d = adapt.decide({("s.py", 2): adapt.Tally(), ("s.py", 3): small})
    assert d["numpy_sites"] == [["s.py", 3]] and d["mode"] == "numpy"
    # a site whose arrays went through a product or linear-algebra call keeps the script fused
    lin = adapt.Tally()
    lin.unjudged, lin.eager = 2, 10_000
    d = adapt.decide({("s.py", 3): small, ("s.py", 4): lin})
    assert d["numpy_sites"] == [["s.py", 3]] and d["mode"] == "fused"
    lin.unjudged = 1                # one call alone fuses with nothing: judged as any other site
    d = adapt.decide({("s.py", 3): small, ("s.py", 4): lin})
    assert d["mode"] == "numpy"


ALIAS = """
import numpy as np
big = np.arange(100000.0) * 2.0
s = np.ones(100) * 3.0               # a small eager result: a plain ndarray
y = big[:100] * s                    # recorded: reads s later, at the flush
s[:] = 0                             # NumPy read s before this write
np.save(OUT, y)
"""


def test_a_numpy_array_written_after_a_recorded_read(tmp_path):
    want = _numpy(tmp_path, ALIAS)
    got, _, _ = _run(tmp_path, ALIAS, adapt_on="0")
    numpy.testing.assert_array_equal(got, want)


def test_decisions_not_the_users_own_are_not_read(tmp_path):
    """A decisions file someone else owns (or could write) is ignored: learned again."""
    import pwd
    _run(tmp_path, SCALAR_LOOP)
    files = list((tmp_path / "cache" / "adapt").glob("[0-9a-f]*.json"))
    assert files
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody").pw_uid
        for f in files:
            os.chown(f, nobody, -1)
    else:
        for f in files:
            f.chmod(0o666)
    _, _, err = _run(tmp_path, SCALAR_LOOP)
    assert "ran as plain NumPy" not in err


def test_the_fuse_command_knows_every_partitioner():
    from flamefuse.cli.fuse import PARTITIONER_NAMES
    from flamefuse.runtime.partition import PARTITIONERS
    assert set(PARTITIONER_NAMES) == set(PARTITIONERS)


def test_a_plain_run_imports_no_fusion_machinery(tmp_path):
    _run(tmp_path, SCALAR_LOOP)
    probe = SCALAR_LOOP + """
import sys
print(sorted(m for m in sys.modules if m.startswith("flamefuse.lazy") or m == "flamefuse.runtime.graph"))
"""
    _run(tmp_path, probe)
    _, out, err = _run(tmp_path, probe)
    assert "ran as plain NumPy" in err and out.strip() == "[]", (out, err)


def test_beside_fused_lines_only_small_arrays_become_plain():
    small, big, mid = adapt.Tally(), adapt.Tally(), adapt.Tally()
    small.eager = 1000
    big.recorded, big.flushes_numpy_s, big.flushes_fused_s = 10, 0.006, 0.001
    mid.recorded, mid.flushes_numpy_s, mid.flushes_fused_s = 3, 0.001, 0.002   # judged NumPy
    d = adapt.decide({("s.py", 3): small, ("s.py", 9): big, ("s.py", 5): mid})
    assert d["mode"] == "fused" and d["numpy_sites"] == [["s.py", 3]]


KALMAN = """
import numpy as np
H = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]]); P = np.eye(4)
for k in range(300):
    S = H @ P @ H.T + np.eye(2)
    K = P @ H.T @ np.linalg.inv(S)
    P = (np.eye(4) - K @ H) @ P + 0.01 * np.eye(4)
np.save(OUT, P)
"""


def test_small_products_in_a_loop_do_not_keep_a_script_fused(tmp_path):
    """4x4 products and inverses (a Kalman filter): NumPy's 0.14 s became 12 s when any two
    products kept their lines fused; only large ones (adapt.LARGE) do."""
    want = _numpy(tmp_path, KALMAN)
    _run(tmp_path, KALMAN)
    got, _, err = _run(tmp_path, KALMAN)
    assert "ran as plain NumPy" in err
    numpy.testing.assert_array_equal(got, want)


MASKS = """
import numpy as np
rng = np.random.default_rng(0)
radius, data = rng.random(50_000), rng.random(50_000)
res = np.zeros(30)
for i in range(30):
    mask = (i / 30 <= radius) & (radius < (i + 1) / 30)
    res[i] = data[mask].mean()
big = np.sqrt(data * data + radius)
np.save(OUT, np.concatenate([res, big]))
"""


def test_selections_while_learning(tmp_path):
    """Every kind of recorded op passes through the learning tallies (a selection's mean has no
    shape: it crashed them), and each run gives NumPy's results."""
    want = _numpy(tmp_path, MASKS)
    for _ in range(3):
        got, _, _ = _run(tmp_path, MASKS)
        numpy.testing.assert_allclose(got, want, rtol=1e-13)


def test_a_small_gain_does_not_keep_a_losing_script_fused():
    """Beside a fused site, a NumPy-judged site with recorded (large) operations stays fused;
    when what it loses outweighs what the fused sites gain, the whole script runs as NumPy
    (go_fast: a loop line lost 0.7 s, kept fused by a one-pass line that saved 9 ms)."""
    win, lose = adapt.Tally(), adapt.Tally()
    win.recorded, win.flushes_numpy_s, win.flushes_fused_s = 1, 0.017, 0.0086
    lose.recorded, lose.eager = 6, 12_000
    lose.flushes_numpy_s, lose.flushes_fused_s = 0.07, 0.6
    d = adapt.decide({("s.py", 3): win, ("s.py", 9): lose})
    assert d["mode"] == "numpy" and d["numpy_sites"] == [["s.py", 3], ["s.py", 9]]
    lose.flushes_fused_s = 0.071 - lose.eager * adapt.EAGER_S     # loses 1 ms: the gain wins
    d = adapt.decide({("s.py", 3): win, ("s.py", 9): lose})
    assert d["mode"] == "fused" and d["numpy_sites"] == []


def _tally(fused_s, numpy_s, modelled=0):
    t = adapt.Tally()
    t.recorded, t.flushes_fused_s, t.flushes_numpy_s, t.modelled = 10, fused_s, numpy_s, modelled
    return t


def test_a_small_loss_on_noise_does_not_flip_a_settled_site():
    """A site fused last run on measured flushes, losing by less than MARGIN once, stays fused;
    a second loss in a row, or a clear one, makes it NumPy's (covariance flipped on noise)."""
    site = ("s.py", 5)
    first = adapt.decide({site: _tally(0.010, 0.012)}, previous={})
    assert first["mode"] == "fused" and first["sites"]["s.py:5"]["measured"]
    noisy = adapt.decide({site: _tally(0.0125, 0.012)}, previous=first)      # 4% over: noise
    assert noisy["mode"] == "fused" and noisy["numpy_sites"] == []
    assert noisy["sites"]["s.py:5"]["lost"] == 1
    again = adapt.decide({site: _tally(0.0125, 0.012)}, previous=noisy)      # repeated: it loses
    assert again["mode"] == "numpy" and again["numpy_sites"] == [["s.py", 5]]
    back = adapt.decide({site: _tally(0.010, 0.012)}, previous=noisy)        # won again: reset
    assert back["mode"] == "fused" and back["sites"]["s.py:5"]["lost"] == 0
    clear = adapt.decide({site: _tally(0.016, 0.012)}, previous=first)       # 33% over: at once
    assert clear["mode"] == "numpy"
    # no settled decision before (none, a NumPy one, or one on a modelled cold flush): no margin
    assert adapt.decide({site: _tally(0.0125, 0.012)}, previous={})["mode"] == "numpy"
    cold = adapt.decide({site: _tally(0.010, 0.012, modelled=1)}, previous={})
    assert not cold["sites"]["s.py:5"]["measured"]
    assert adapt.decide({site: _tally(0.0125, 0.012)}, previous=cold)["mode"] == "numpy"
    assert adapt.decide({site: _tally(0.0125, 0.012, modelled=1)}, previous=first)["mode"] == "numpy"


def test_a_small_net_loss_of_a_settled_script_is_held_once():
    win, lose = ("s.py", 3), ("s.py", 4)
    first = adapt.decide({win: _tally(0.010, 0.020), lose: _tally(0.030, 0.028)}, previous={})
    assert first["mode"] == "fused" and first["net_lost"] == 0
    tallies = {win: _tally(0.010, 0.020), lose: _tally(0.040, 0.029)}       # loses 0.011 > 0.010
    assert adapt.decide(tallies, previous={})["mode"] == "numpy"            # today's rule
    held = adapt.decide(tallies, previous=first)
    assert held["mode"] == "fused" and held["net_lost"] == 1
    tallies = {win: _tally(0.010, 0.020), lose: _tally(0.040, 0.029)}
    assert adapt.decide(tallies, previous=held)["mode"] == "numpy"          # twice: NumPy


def test_a_cold_flush_is_charged_by_the_model(monkeypatch):
    """A flush that compiled kernels is modelled (optimistically), whatever it measured: judged
    losing on its cold remainder, gemver and rule110 ran as plain NumPy for good (a plain run
    never learns again)."""
    from flamefuse.runtime import kernel
    monkeypatch.setattr(kernel, "COUNTS", kernel.COUNTS.copy())
    mark = adapt.cold_mark()
    assert adapt.warm_seconds(mark, 0.25) == 0.25                   # nothing compiled: measured
    kernel.COUNTS["compiled"] += 1
    assert adapt.warm_seconds(mark, 0.65) is None
    t = adapt.Tally()
    adapt.charge_flush({t: [6, 6_000_000, 0.004]}, None)
    assert t.modelled == 1
    assert not adapt.decide({("s.py", 1): t}, previous={})["sites"]["s.py:1"]["measured"]


def test_a_held_loss_is_kept_for_the_next_run(tmp_path, monkeypatch):
    """A warm run writes its decisions only when they changed (start-up); a first small loss,
    held fused, is a change: forgetting it, every run held its loss again and the site never
    became NumPy's."""
    monkeypatch.setenv("FLAMEFUSE_ADAPT", "1")
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    site = ("s.py", 5)
    first = adapt.decide({site: _tally(0.010, 0.012)}, previous={})
    adapt.save(script, [], first)
    loaded = adapt.load(script, [])
    assert loaded is not None and loaded["mode"] == "fused"
    noisy = adapt.decide({site: _tally(0.0125, 0.012)}, previous=loaded)     # held once
    assert noisy["mode"] == "fused" and noisy["sites"]["s.py:5"]["lost"] == 1
    adapt.save(script, [], noisy, previous=loaded)
    again = adapt.decide({site: _tally(0.0125, 0.012)}, previous=adapt.load(script, []))
    assert again["mode"] == "numpy"                                          # the second loss


# -- the script probe (flamefuse.runtime.probe): a script the model judges paying is run once as
# plain NumPy, and the faster of the two measured runs is kept. The measures are injected
# (FLAMEFUSE_PROBE_SECONDS=F,N): no timed assertion.

def _as_users_run(monkeypatch, fused_s, numpy_s):
    """Native libraries, plans and kernel lists kept as users run (a warm run loads its kernels
    at once: under the suite's settings a warm run loads them through Numba, judged losing),
    and the probe's measures injected."""
    for name in ("FLAMEFUSE_NATIVE", "FLAMEFUSE_PRELOAD", "FLAMEFUSE_PLAN_CACHE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("FLAMEFUSE_PROBE_SECONDS", f"{fused_s},{numpy_s}")


def _adapt_files(tmp_path):
    return {p.name: p.stat().st_mtime_ns for p in (tmp_path / "cache" / "adapt").glob("*.json")}


def test_a_paying_script_that_measures_slower_than_numpy_runs_as_numpy(tmp_path, monkeypatch):
    """mandelbrot's case: the model judges fusing paying (its fallbacks' cost is charged to no
    site), the measured runs say NumPy is faster: from the probe on, plain NumPy."""
    _as_users_run(monkeypatch, 0.5, 0.2)
    want = _numpy(tmp_path, ELEMENTWISE)
    for _ in range(2):                                  # learn (cold), then a warm fused run
        got, _, err = _run(tmp_path, ELEMENTWISE, "--explain")
        assert "ran as plain NumPy" not in err
        numpy.testing.assert_allclose(got, want, rtol=1e-13)
    assert "adapt: script probe: fused 0.500 s, NumPy -; the next run runs as plain NumPy" in err
    got, _, err = _run(tmp_path, ELEMENTWISE, "--explain")   # the probe's plain run
    assert "ran as plain NumPy: adaptive fusion's probe" in err, err
    assert "adapt: script probe: fused 0.500 s, NumPy 0.200 s -> NumPy" in err, err
    numpy.testing.assert_array_equal(got, want)
    before = _adapt_files(tmp_path)
    got, _, err = _run(tmp_path, ELEMENTWISE)
    assert "ran as plain NumPy: measured faster than fused (fused 0.500 s, NumPy 0.200 s" in err, err
    numpy.testing.assert_array_equal(got, want)
    assert _adapt_files(tmp_path) == before              # settled: nothing written


def test_a_paying_script_that_measures_faster_stays_fused(tmp_path, monkeypatch):
    _as_users_run(monkeypatch, 0.1, 0.3)
    want = _numpy(tmp_path, ELEMENTWISE)
    for _ in range(2):
        _run(tmp_path, ELEMENTWISE)
    got, _, err = _run(tmp_path, ELEMENTWISE, "--explain")
    assert "ran as plain NumPy: adaptive fusion's probe" in err, err
    assert "adapt: script probe: fused 0.100 s, NumPy 0.300 s -> fused" in err, err
    numpy.testing.assert_array_equal(got, want)
    before = _adapt_files(tmp_path)
    for _ in range(2):
        got, _, err = _run(tmp_path, ELEMENTWISE, "--explain")
        assert "ran as plain NumPy" not in err and "blocks" in err, err
        assert "-> fused" in err
        numpy.testing.assert_allclose(got, want, rtol=1e-13)
    assert _adapt_files(tmp_path) == before              # settled: nothing written


def test_the_probes_measure_counts_flamefuses_start_up(tmp_path, monkeypatch):
    """The probe compares what the user waits for: flamefuse's start-up (its runtime imported,
    its kernels loaded) and the script. With the script's own time alone, go_fast (no gain from
    fusion, a 40 ms kernel) measured fused within 3% of NumPy and stayed fused, 13% slower as a
    process."""
    import re
    for name in ("FLAMEFUSE_NATIVE", "FLAMEFUSE_PRELOAD", "FLAMEFUSE_PLAN_CACHE"):
        monkeypatch.setenv(name, "1")
    for _ in range(2):                                  # learn (cold), then a warm fused run
        _, _, err = _run(tmp_path, ELEMENTWISE)
    seconds = float(re.search(r"flamefuse fuse: ([0-9.]+) s", err).group(1))
    startup = float(re.search(r"flamefuse's own start-up ([0-9.]+) s", err).group(1))
    from flamefuse.runtime import adapt_entry
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLAMEFUSE_ADAPT", "1")
    script = tmp_path / "s.py"
    probe = adapt_entry.load(str(script), [], script.read_bytes())["probe"]
    assert startup > 0.002
    assert probe["fused"][-1] >= seconds + startup - 0.0015, (probe, seconds, startup)


def _learned(elements=1000, numpy_sites=(), measured=True, mode="fused"):
    return {"mode": mode, "numpy_sites": [list(s) for s in numpy_sites], "fused_s": 0.1, "numpy_s": 0.2,
            "net_lost": 0, "sites": {"s.py:3": {"elements": elements, "measured": measured}}}


def test_the_probe_settles_close_calls_on_a_second_round_and_keeps_a_margin():
    from flamefuse.runtime import probe
    now = 1000.0
    d = probe.after_fused(_learned(), None, 0.100, ok=True, now=now)
    assert probe.wants_plain(d)
    clear = probe.after_plain(d, 0.200, now=now)             # NumPy twice as slow: fused at once
    assert clear["mode"] == "fused" and clear["probe"]["verdict"] == "fused" and not probe.wants_plain(clear)
    slow = probe.after_plain(d, 0.050, now=now)              # NumPy twice as fast: NumPy at once
    assert slow["mode"] == "numpy" and slow["probe"]["verdict"] == "numpy"
    close = probe.after_plain(d, 0.098, now=now)             # within CLOSE: one more round
    assert close["mode"] == "fused" and close["probe"]["verdict"] is None
    assert not probe.wants_plain(close)                      # the next run is fused again
    again = probe.after_fused(_learned(), close, 0.090, ok=True, now=now)
    assert again["probe"]["fused"] == [0.100, 0.090] and probe.wants_plain(again)
    done = probe.after_plain(again, 0.095, now=now)          # best 0.090 against 0.095: fused
    assert done["mode"] == "fused" and done["probe"]["verdict"] == "fused"
    tie = probe.after_plain(again, 0.089, now=now)           # 0.090 <= 1.03 x 0.089: fused
    assert tie["probe"]["verdict"] == "fused"
    lost = probe.after_plain(again, 0.085, now=now)          # beyond the margin: NumPy
    assert lost["mode"] == "numpy" and lost["probe"]["verdict"] == "numpy"


def test_the_probe_measures_only_warm_clean_runs_and_reprobes_when_the_work_changes():
    from flamefuse.runtime import probe
    now = 1000.0
    assert "probe" not in probe.after_fused(_learned(measured=False), None, 0.1, ok=True, now=now)
    assert "probe" not in probe.after_fused(_learned(), None, 0.1, ok=False, now=now)
    assert "probe" not in probe.after_fused(_learned(mode="numpy"), None, 0.1, ok=True, now=now)
    assert "probe" not in probe.after_fused(_learned(mode="numpy", measured=False), _learned(), 0.1,
                                            ok=True, now=now)     # a cold run: the model decides
    moved = probe.after_fused(_learned(numpy_sites=[("s.py", 9)]), _learned(), 0.1, ok=True, now=now)
    assert "probe" not in moved                    # the NumPy sites changed: not the next run's setup
    settled = probe.after_plain(probe.after_fused(_learned(), None, 0.1, ok=True, now=now), 0.3, now=now)
    same = probe.after_fused(_learned(elements=1500), settled, 0.2, ok=True, now=now + 10)
    assert same["probe"] == settled["probe"]                 # noise or small change: kept as is
    grown = probe.after_fused(_learned(elements=5000), settled, 0.2, ok=True, now=now + 10)
    assert grown["probe"]["verdict"] is None and probe.wants_plain(grown)
    old = probe.after_fused(_learned(), settled, 0.2, ok=True, now=now + probe.MAX_AGE_S)
    assert old["probe"]["verdict"] is None and probe.wants_plain(old)
    numpy_verdict = probe.after_plain(probe.after_fused(_learned(), None, 0.3, ok=True, now=now), 0.1, now=now)
    assert not probe.expired(numpy_verdict, now=now + 10)
    assert probe.expired(numpy_verdict, now=now + probe.MAX_AGE_S)
    assert probe.state({"probe": {"fused": "x", "numpy": [], "verdict": None}}) is None   # damaged


def test_the_probe_can_be_turned_off(monkeypatch):
    from flamefuse.runtime import probe
    monkeypatch.setenv("FLAMEFUSE_PROBE", "0")
    d = probe.after_fused(_learned(), None, 0.1, ok=True, now=0.0)
    assert "probe" not in d and not probe.wants_plain(dict(d, probe={"fused": [0.1], "numpy": [],
                                                                      "verdict": None}))


def test_a_fused_verdict_holds_against_the_models_numpy():
    """The model's whole-script NumPy decision is noisy under load and permanent (a plain run
    never learns again; kmeans, 1.9x faster fused under main, ended plain that way in a loaded
    run): a settled fused verdict keeps the decisions it was measured with, until the work
    changes or the verdict ages."""
    from flamefuse.runtime import probe
    now = 1000.0
    settled = probe.after_plain(probe.after_fused(_learned(), None, 0.1, ok=True, now=now), 0.3, now=now)
    assert settled["probe"]["verdict"] == "fused"
    assert probe.after_fused(_learned(mode="numpy"), settled, 0.2, ok=True, now=now + 10) == settled
    grown = probe.after_fused(_learned(elements=9000, mode="numpy"), settled, 0.2, ok=True, now=now + 10)
    assert probe.wants_plain(grown) and grown["probe"]["verdict"] is None   # the work changed: measured again
    aged = probe.after_fused(_learned(mode="numpy"), settled, 0.2, ok=True, now=now + probe.MAX_AGE_S)
    assert probe.wants_plain(aged) and aged["probe"]["fused"] == [0.2]
    cold = probe.after_fused(_learned(mode="numpy", measured=False), settled, 0.2, ok=True,
                             now=now + probe.MAX_AGE_S)
    assert cold["mode"] == "numpy"                           # aged, and nothing measured: the model


def test_a_fused_verdict_holds_against_the_models_sites_and_held_losses(tmp_path, monkeypatch):
    """Under load a settled script's flushes measure slower and NumPy's estimate does not (its
    costs were timed by an earlier run): the model held a site's first small loss (a write), a
    second in a row or a clear one made sites NumPy's, though the script measured 3x faster
    fused (a net loss beside a fused site likewise). A settled fused verdict keeps the decisions
    it was measured with: the warm run writes nothing and its next run runs as the verdict's;
    the work changed, it is probed again."""
    from flamefuse.runtime import probe
    monkeypatch.setenv("FLAMEFUSE_ADAPT", "1")
    monkeypatch.setenv("FLAMEFUSE_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    a, b = ("s.py", 3), ("s.py", 4)
    now = 1000.0
    first = adapt.decide({a: _tally(0.010, 0.030), b: _tally(0.010, 0.030)}, previous={})
    opened = probe.after_fused(first, None, 0.1, ok=True, now=now)
    settled = probe.after_plain(opened, 0.3, now=now)
    assert settled["mode"] == "fused" and settled["probe"]["verdict"] == "fused"
    adapt.save(script, [], settled)
    loaded = adapt.load(script, [])
    files = _adapt_files(tmp_path)
    small = adapt.decide({a: _tally(0.032, 0.030), b: _tally(0.032, 0.030)}, previous=loaded)
    assert small["sites"]["s.py:3"]["lost"] == 1                 # the model holds a first loss
    net = adapt.decide({a: _tally(0.010, 0.030), b: _tally(0.051, 0.030)}, previous=loaded)
    assert net["mode"] == "fused" and net["net_lost"] == 1        # a first small net loss held
    whole = adapt.decide({a: _tally(0.040, 0.030), b: _tally(0.040, 0.030)}, previous=loaded)
    assert whole["mode"] == "numpy"
    for learned in (small, net, whole):
        kept = probe.after_fused(learned, loaded, 0.2, ok=True, now=now + 10)
        assert kept == loaded
        adapt.save(script, [], kept, previous=loaded)
        assert _adapt_files(tmp_path) == files                  # nothing written
        assert adapt.load(script, []) == loaded
    grown = dict(small, sites={k: dict(v, elements=5000) for k, v in small["sites"].items()})
    assert probe.wants_plain(probe.after_fused(grown, loaded, 0.2, ok=True, now=now + 10))


def test_a_warm_fused_run_the_model_turns_numpy_is_probed_first():
    """kmeans: the model's estimate is within a few % of its fused cost and flipped it NumPy's on
    a loaded warm run, for good, though fused measures 2x faster. Such a flip is checked: the
    next run is the plain run the model wanted, and a fused verdict restores the decisions the
    fused run ran with."""
    from flamefuse.runtime import probe
    now = 1000.0
    ran = _learned()
    flipped = probe.after_fused(_learned(mode="numpy", numpy_sites=[("s.py", 3)]), ran, 0.4, ok=True, now=now)
    assert flipped["mode"] == "fused" and flipped["numpy_sites"] == [] and probe.wants_plain(flipped)
    back = probe.after_plain(flipped, 0.9, now=now)
    assert back["mode"] == "fused" and back["numpy_sites"] == [] and back["probe"]["verdict"] == "fused"
    agreed = probe.after_plain(flipped, 0.2, now=now)
    assert agreed["mode"] == "numpy"


def test_a_flush_measured_while_the_background_compiler_builds_is_modelled(monkeypatch):
    """Kernels this process handed to the background compiler and not built yet: the compiler
    shares the cores with the flush's thread team, so what the flush measured is not what a warm
    run costs (ising went plain NumPy for good on such a run)."""
    from flamefuse.runtime import compiler
    monkeypatch.setattr(compiler, "_PENDING", {})
    jobs = []
    monkeypatch.setattr(compiler, "_live_jobs", lambda: jobs)
    monkeypatch.setattr(compiler, "_BUSY", [-1.0, False])
    mark = adapt.cold_mark()
    assert adapt.warm_seconds(mark, 0.25) == 0.25
    compiler._PENDING[("kernel source", ("<f8:1w",))] = True
    assert adapt.warm_seconds(mark, 0.78) is None
    compiler._PENDING.clear()
    jobs.append("job-1-0123456789abcdef.json")          # an earlier run's worker, still building
    compiler._BUSY[0] = -1.0
    assert adapt.warm_seconds(mark, 0.78) is None
    jobs.clear()
    compiler._BUSY[0] = -1.0
    assert adapt.warm_seconds(mark, 0.25) == 0.25
