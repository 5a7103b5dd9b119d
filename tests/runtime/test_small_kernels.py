"""A parallel native kernel too small to pay for waking the thread team runs on the calling
thread (:mod:`flamefuse.runtime.teamcost`), with the same bits as the team's launch."""
import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.runtime import execute, native, teamcost
from flamefuse.runtime.code import Code


def _steps():
    return [s for plan in execute._PLANS.values() for s in plan.steps]


def _built(program):
    """``program(lazy)`` through Numba (its libraries wanted and built), then through the
    libraries; returns the second run's arrays."""
    first = [numpy.array(x) for x in program(lazy)]
    assert lazy.build_native() >= 1
    lazy.flush()
    execute._PLANS.clear()
    native._LOADED.clear()
    second = [numpy.array(x) for x in program(lazy)]
    for a, b in zip(first, second):
        numpy.testing.assert_array_equal(a, b)
    return second


@pytest.fixture
def team_of_three(monkeypatch):
    """A team of three threads (whatever this machine's CPU count), so a team launch really
    divides the chunks."""
    monkeypatch.setattr(native, "CHUNKS", 3)
    monkeypatch.setattr(native, "_TEAM", [])


def test_a_small_element_wise_kernel_uses_the_calling_thread_a_heavy_one_the_team(libraries, team_of_three):
    rng = numpy.random.default_rng(5)
    S, R = rng.random((250, 250)), rng.random((250, 250))

    def program(np):
        s, r = np.asarray(S), np.asarray(R)
        total = numpy.asarray(s + r)              # run now: a kernel of its own
        return total, np.exp(s) * np.sin(r)

    got = _built(program)
    numpy.testing.assert_array_equal(got[0], S + R)
    steps = {s.code.chunk: s for s in _steps()}
    small = next(s for c, s in steps.items() if "np.exp" not in "\n".join(c))
    heavy = next(s for c, s in steps.items() if "np.exp" in "\n".join(c))
    assert small.code.parallel and heavy.code.parallel          # both have SPLIT chunks
    for step in (small, heavy):
        assert step.entry and step.entry[0].library is not None  # the native library's launchers
    launcher = native.find(small.source, next(iter(k[1] for k in native._LOADED if k[0] == small.source)))
    assert small.entry[0] is launcher.serial and launcher.serial is not launcher
    launcher = native.find(heavy.source, next(iter(k[1] for k in native._LOADED if k[0] == heavy.source)))
    assert heavy.entry[0] is launcher                           # 62500 exp and sin: worth the team
    assert execute.STATS["serial_launches"] >= 1


@pytest.mark.parametrize("n", [1, 7, 255, 256, 257, 1000, 150_001, 400_003])
def test_the_calling_thread_launch_gives_the_teams_bits(libraries, team_of_three, monkeypatch, n):
    """Every chunk on one thread, in order, then the combining step: the same bits as the
    team's shares (an element-wise result and float sums' per-chunk partials combined)."""
    rng = numpy.random.default_rng(n)
    x, y = rng.standard_normal(n) * 1e3, rng.random(n)

    def program(np):
        a, b = np.asarray(x), np.asarray(y)
        return (a * 3.0 - b) / (b + 0.5), (a * b + 1e-3).sum(), np.sqrt(b).sum(), np.exp(a * 1e-3).sum()

    _built(program)
    runs = {}
    for alone in (False, True):
        monkeypatch.setattr(teamcost, "serial", lambda code, args, alone=alone: alone)
        lazy.flush()
        execute._PLANS.clear()
        runs[alone] = [numpy.array(v) for v in program(lazy)]
        launchers = [s.entry[0] for s in _steps()]
        assert all(f.library is not None for f in launchers)
        if n >= 1 << 14:                    # parallel kernels: the chosen launcher is used
            assert any(f.__name__ == ("serial" if alone else "launch") for f in launchers)
    for team, one in zip(runs[False], runs[True]):
        assert team.dtype == one.dtype and team.tobytes() == one.tobytes()
    want = program(numpy)
    numpy.testing.assert_allclose(runs[True][0], want[0], rtol=1e-15)
    numpy.testing.assert_allclose(runs[True][1], want[1], rtol=1e-12)


def test_the_cost_model_reads_the_loop_extents_and_library_calls():
    cheap = Code(("n0", "n1", "a2", "a3"), True, "n0", 256, (),
                 ("for i0 in range(lo, hi):", "    for i1 in range(n1):",
                  "        a3[i0, i1] = (a2[i0, i1] + np.float64(1.0))"), ())
    heavy = Code(cheap.params, True, "n0", 256, (),
                 ("for i0 in range(lo, hi):", "    c1 = np.uint64(0)", "    while c1 < n1:",
                  "        for i1 in range(c1, e1):", "            a3[i0, i1] = np.exp(a2[i0, i1])"), ())
    assert teamcost.serial_ns(cheap, {"n0": 250, "n1": 250}) == 62500 * teamcost.ITER_NS
    assert teamcost.serial_ns(heavy, {"n0": 10, "n1": 20}) == 200 * (teamcost.ITER_NS + teamcost.CALL_NS)
    assert teamcost.serial(cheap, (250, 250, None, None))
    assert not teamcost.serial(cheap, (2000, 2000, None, None))
    assert not teamcost.serial(heavy, (250, 250, None, None))
    assert teamcost.serial_ns(Code(("a0",), False, None, 1, (), ("a0[0] = 1",), ()), {}) is None


def test_a_launch_takes_each_arrays_own_address_whatever_its_flags():
    """The launcher's cheap address (a ctypes view of the first byte) is ``x.ctypes.data`` for
    writeable arrays and falls back to it where there is no writeable byte to view."""
    import ctypes
    native._BYTE[:] = [ctypes.c_char.from_buffer, ctypes.addressof]
    frozen = numpy.arange(6.0)
    frozen.flags.writeable = False
    for x in (numpy.ones(3), numpy.ones((4, 5))[1:], numpy.zeros(0), numpy.ones(1, numpy.int8),
              numpy.ones((2, 3), numpy.float32).T, frozen, numpy.ones(7)[::2], numpy.zeros(())):
        assert native._addr(x) == x.ctypes.data


def test_a_read_only_input_reaches_the_library(libraries):
    a = numpy.arange(70_000.0)
    a.flags.writeable = False

    def program(np):
        x = np.asarray(a)
        return x * 2.0 + 1.0, (x * 0.5).sum()

    got = _built(program)
    numpy.testing.assert_array_equal(got[0], a * 2.0 + 1.0)
    assert float(got[1]) == pytest.approx(float((a * 0.5).sum()), rel=1e-14)


@pytest.mark.parametrize("alone", [False, True])
def test_floating_point_warnings_from_the_team_and_from_the_calling_thread(libraries, team_of_three,
                                                                           monkeypatch, alone):
    """A flag raised in the last chunk (a worker's share on the team) or on the calling thread
    gives NumPy's warning either way."""
    import warnings
    from flamefuse.lazy import fpstate
    from flamefuse.runtime import fpflags
    if not fpflags.AVAILABLE:
        pytest.skip("no fetestexcept in this C library")
    n = 60_000
    x = numpy.linspace(1.0, 2.0, n)
    x[-3] = 0.0

    def program(np, w):
        with w.catch_warnings(record=True) as seen:
            w.simplefilter("always")
            r = 1.0 / np.asarray(x) + 1.0
            numpy.asarray(r)
        return [str(m.message) for m in seen], r

    want = program(numpy, warnings)
    assert want[0] == ["divide by zero encountered in divide"]
    _built(lambda np: program(np, fpstate.warnings_module())[1:])
    monkeypatch.setattr(teamcost, "serial", lambda code, args: alone)
    lazy.flush()
    execute._PLANS.clear()
    got = program(lazy, fpstate.warnings_module())
    assert [s.entry[0].__name__ for s in _steps() if s.code.parallel] == ["serial" if alone else "launch"]
    assert got[0] == want[0]
    numpy.testing.assert_array_equal(numpy.asarray(got[1]), want[1])


def _nest_products(np, A, x, r, u):
    y = (A @ x) @ A                 # matvec, then vecmat of the same matrix: one loop nest
    q, s = A @ u, A.T @ r           # BiCG's pair
    return y, q, s


@pytest.mark.parametrize("rows, alone", [(200, True), (1500, False)])
def test_a_small_loop_nest_uses_the_calling_thread_with_the_teams_bits(libraries, team_of_three,
                                                                       monkeypatch, rows, alone):
    from flamefuse.runtime import linalg
    rng = numpy.random.default_rng(rows)
    A, x = rng.random((rows, 170)), rng.random(170)
    r, u = rng.random(rows), rng.random(170)

    def once():
        linalg._KERNELS.clear()
        native._LOADED.clear()
        lazy.flush()
        return [numpy.array(v) for v in _nest_products(lazy, *map(lazy.asarray, (A, x, r, u)))]

    first = once()                                   # Numba's kernels, wanting libraries
    assert lazy.build_native() >= 1
    chosen = once()                                  # the libraries: the model decides
    launches = [k.fn.fn for k in linalg._KERNELS.values() if getattr(k.fn, "fn", None) is not None]
    assert launches and all(f.library is not None for f in launches)
    assert {f.__name__ for f in launches} == {"serial" if alone else "launch"}
    for a, b in zip(first, chosen):
        numpy.testing.assert_array_equal(a, b)
    runs = {}
    for forced in (False, True):                     # the same kernels forced each way
        monkeypatch.setattr(teamcost, "nest_serial", lambda args, forced=forced: forced)
        runs[forced] = once()
    for team, one in zip(runs[False], runs[True]):
        assert team.tobytes() == one.tobytes()
    want = _nest_products(numpy, A, x, r, u)
    for b, w in zip(chosen, want):
        numpy.testing.assert_allclose(b, w, rtol=1e-12)
