"""Programs written the way NumPy users write them give NumPy's results under flamefuse.lazy.

Each program in tests/data/programs/ (in-place updates through overlapping views, integer
overflow and mixed dtypes, NaN/inf and ``np.errstate``, masks and fancy indexing, reductions
with ``axis``/``keepdims``/``where``, scans and sorts, 0- and 1-size broadcasting, float32 and
complex, views escaping into lists, arrays handed to ``bytes``/``pickle``/``json``, threads,
generators, exceptions caught mid-loop, random streams, ``np.linalg`` among element-wise
code, one function called with many shapes; and, from the second campaign, ufunc methods
with ``out=``/``where=``/``keepdims``/axis tuples, integer division and NEP 50 promotion,
``copyto``/``put``/``place`` and repeated fancy indices, ``einsum``/``round``/``clip``, 0-d arrays
and scalars, structured/object/string/datetime arrays, ``deepcopy``/``pickle``/printing with
print options, script globals, threads and caught shape/index errors) fills a dict ``R`` of results. Here each runs
three times in this process, small (``FF_PROG_N``): on NumPy, and twice with its ``import numpy``
answered by flamefuse.lazy (``flamefuse fuse``'s import hook; kernels interpreted): every operation
recorded, and at flamefuse fuse's default ``eager_below``, where these small arrays run eagerly;
the dicts, pickled as ``flamefuse fuse`` would send them, must agree: integers,
booleans, strings, dtypes, shapes, types and error messages exactly, floating-point values
within a few units in the last place of the data's scale (NumPy sums pairwise; a fused sum
adds in chunks). Each program also runs as a script (``python PROG OUT``), and
``flamefuse fuse PROG OUT`` gives the same pickle: /tmp-style checks of that kind found the
bugs tests/lazy/test_numpy_semantics.py pins.

:data:`KNOWN` lists results that once differed, with what they check (the warnings NumPy gives in
its default ``warn`` error state, which fused kernels now give from their floating-point flags;
a view's ``.base``; a linear-algebra error's message); they are left out of the general
comparison and checked by their own tests at the end.
"""
import builtins
import pickle
import warnings
from pathlib import Path

import numpy
import pytest

import flamefuse.lazy as lazy
from flamefuse.cli.fuse import _importer

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "tests" / "data" / "programs").glob("p*.py"))
N = "302"           # elements of the programs' 1-D arrays (not a multiple of 3 or 7: some errors)
WARNINGS = "NumPy's RuntimeWarning in its default 'warn' error state"
KNOWN = {"p02_int_overflow": {"int_div0_warn": WARNINGS},
         "p03_nan_inf": {"w1": WARNINGS, "w2": WARNINGS, "w3": WARNINGS, "w4": WARNINGS},
         "p16_shapes_across_calls": {"w": WARNINGS},
         "p09_views_escape": {"base_is": "a lazy view's .base is the lazy array it was taken of"},
         "p15_linalg_mixed": {"sing": "the recorded np.linalg.inv's LinAlgError message is NumPy's"},
         "p22_int_div_promotion": {k: WARNINGS for k in (
             "fdiv0", "mod0", "fdiv0_u8", "fdiv_int_min", "fdiv_float0", "mod_float0", "true_div_int",
             "u8_plus_neg")},
         "p28_script_threads_errors": {"errors": "the recorded np.linalg.inv's LinAlgError message is NumPy's"}}


def _run(path: Path, module):
    """The program's ``R`` (pickled and read back, as NumPy's values)."""
    code = compile(path.read_text(), str(path), "exec")
    namespace = {"__name__": "program", "__file__": str(path)}
    if module is not numpy:
        namespace["__builtins__"] = dict(builtins.__dict__, __import__=_importer(module))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lazy.FallbackWarning)
        exec(code, namespace)
        lazy.flush()
    return pickle.loads(pickle.dumps(namespace["R"]))


@pytest.fixture(scope="session")
def results():
    """Every program on NumPy and on flamefuse.lazy, once per session."""
    mp = pytest.MonkeyPatch()
    mp.setenv("FLAMEFUSE_JIT", "0")
    mp.setenv("FF_PROG_N", N)
    lazy.configure(partitioner="greedy", eager_below=0, fallback_warnings=False)   # as flamefuse fuse
    try:
        out = {}
        for path in PROGRAMS:
            numpy.random.seed(12345)
            want = _run(path, numpy)
            numpy.random.seed(12345)
            got = _run(path, lazy)
            lazy.configure(eager_below=1 << 15)       # flamefuse fuse's default: all eager here
            numpy.random.seed(12345)
            got_eager = _run(path, lazy)
            lazy.configure(eager_below=0)
            out[path.stem] = (got, want, got_eager)
        return out
    finally:
        lazy.configure(eager_below=1 << 15, fallback_warnings=True)
        mp.undo()


def _close(a: numpy.ndarray, b: numpy.ndarray) -> bool:
    """Floating-point arrays equal up to rounding: the same NaNs and infinities, and finite
    values within 256 units in the last place of the largest magnitude in ``b`` (at least 1:
    a sum that cancels to almost nothing, a residual, keeps the error of its terms' scale)."""
    if not numpy.array_equal(numpy.isnan(a), numpy.isnan(b)):
        return False
    fin = numpy.isfinite(b)
    if not numpy.array_equal(numpy.where(fin, 0, a), numpy.where(fin, 0, b), equal_nan=True):
        return False
    if not fin.any():
        return True
    eps = numpy.finfo(b.dtype).eps
    scale = numpy.abs(b[fin]).max()
    return bool(numpy.all(numpy.abs(a[fin] - b[fin]) <= 256 * eps * max(scale, 1.0)))


def _compare(got, want, path: str, diffs: list) -> None:
    if isinstance(want, (numpy.ndarray, numpy.generic)) and not isinstance(want, numpy.bool_):
        if type(got) is not type(want) or numpy.shape(got) != numpy.shape(want) \
                or got.dtype != want.dtype:
            diffs.append(f"{path}: {type(got).__name__} {getattr(got, 'dtype', '')} "
                         f"{numpy.shape(got)} vs {type(want).__name__} {want.dtype} {numpy.shape(want)}")
        elif want.dtype.kind in "fc":
            g, w = numpy.asarray(got), numpy.asarray(want)
            if not all(_close(f(g), f(w)) for f in (numpy.real, numpy.imag)):
                diffs.append(f"{path}: {got!r} vs {want!r}"[:400])
        elif not numpy.array_equal(got, want):
            diffs.append(f"{path}: {got!r} vs {want!r}"[:400])
        return
    if type(got) is not type(want):
        diffs.append(f"{path}: type {type(got).__name__} vs {type(want).__name__}")
    elif isinstance(want, dict):
        if got.keys() != want.keys():
            diffs.append(f"{path}: keys {sorted(set(got) ^ set(want))}")
        for k in want.keys() & got.keys():
            _compare(got[k], want[k], f"{path}.{k}", diffs)
    elif isinstance(want, (list, tuple)):
        if len(got) != len(want):
            diffs.append(f"{path}: length {len(got)} vs {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{path}[{i}]", diffs)
    elif isinstance(want, float):
        if not _close(numpy.array(got), numpy.array(want)):
            diffs.append(f"{path}: {got!r} vs {want!r}")
    elif got != want:
        diffs.append(f"{path}: {got!r} vs {want!r}"[:400])


@pytest.mark.parametrize("eager", [False, True], ids=["recorded", "eager"])
@pytest.mark.parametrize("name", [p.stem for p in PROGRAMS])
def test_program_gives_numpys_results(results, name, eager):
    """Every operation recorded, and (``eager``) every one run at once as small computed
    operands are at flamefuse fuse's default size (a wrong ``out=`` there had an error of its own)."""
    got, want, got_eager = results[name]
    got = got_eager if eager else got
    known = KNOWN.get(name, {})
    diffs = []
    _compare({k: v for k, v in got.items() if k not in known},
             {k: v for k, v in want.items() if k not in known}, "R", diffs)
    assert not diffs, "\n".join(diffs[:20])


def test_default_warnings_of_fused_operations(results):
    _known_agree(results, WARNINGS)


def test_base_of_a_view(results):
    _known_agree(results, KNOWN["p09_views_escape"]["base_is"])


def test_linalg_error_message(results):
    _known_agree(results, KNOWN["p15_linalg_mixed"]["sing"])


def test_errors_other_than_linalg_messages_agree(results):
    """p28's caught errors other than the non-square ``np.linalg.inv`` (its message is pinned
    by :func:`test_linalg_error_message`) are NumPy's, type and message."""
    got, want, _ = results["p28_script_threads_errors"]
    assert len(got["errors"]) == len(want["errors"])
    for k, (g, w) in enumerate(zip(got["errors"], want["errors"])):
        if w[0] != "LinAlgError":
            assert g == w, (k, g, w)


def _known_agree(results, reason):
    for name, keys in KNOWN.items():
        got, want, _ = results[name]
        for k, why in keys.items():
            if why == reason:
                diffs = []
                _compare(got[k], want[k], f"{name}: {k}", diffs)
                assert not diffs, "\n".join(diffs[:20])
