"""NumPy's errors, warnings and write-through views on recorded operations (fuzzcamp findings).

Each test here failed before its fix; the programs of tests/data/programs/ found them
(tests/lazy/test_programs_differential.py runs those):

* ``np.errstate(divide="raise")`` / ``np.seterr(all="raise")``: a recorded division by zero
  never raised ``FloatingPointError`` (the fused kernel cannot); now NumPy runs operations while
  the error state asks for more than a warning (:func:`flamefuse.lazy.eager.fp_errors_act`);
* ``a ** -1`` in integers: NumPy raises ``ValueError`` at the call; the kernel's integer power
  returned garbage (Numba) or raised at a later flush (interpreted);
* ``z.real += 1``: ``AttributeError`` (no setter), and ``z.real`` / ``x.view(np.int64)`` were
  copies or unordered aliases, so writes through them were lost;
* shape errors of ufuncs had ``np.broadcast_shapes``'s message, not the ufunc's;
* ``E.mean()`` of an empty array gave no "Mean of empty slice" warning;
* adaptive fusion's timing of NumPy on scratch arrays leaked "overflow encountered in reduce".
"""
import warnings

import numpy
import scipy.linalg
import pytest

import flamefuse.lazy as lazy


pytestmark = pytest.mark.usefixtures("recording")     # tests/lazy/conftest.py


def _x(mod):
    x = mod.linspace(-1.0, 1.0, 41) * 1.0
    x[::5] = 0.0
    return x


def test_errstate_raise_raises_at_the_operation():
    for mod in (numpy, lazy):
        x = _x(mod)
        with mod.errstate(divide="raise"):
            with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
                1.0 / x
        y = 1.0 / (x + 3.0)           # outside: no error
        assert float(y.sum()) == pytest.approx(float(numpy.sum(1.0 / (_x(numpy) + 3.0))))


def test_seterr_raise_then_restore_and_overflow_in_reduce():
    for mod in (numpy, lazy):
        big = mod.full(64, 1e308) * 1.0
        old = mod.seterr(all="raise")
        try:
            with pytest.raises(FloatingPointError, match="overflow"):
                big.sum()
            with pytest.raises(FloatingPointError, match="invalid value"):
                mod.sqrt(big * -1.0)
        finally:
            mod.seterr(**old)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert numpy.isinf(float(big.sum()))


def test_errstate_call_calls_back_like_numpy():
    calls = {}
    for mod in (numpy, lazy):
        seen = []
        x = _x(mod)
        with mod.errstate(all="call", call=lambda kind, flag: seen.append(kind)):
            r = numpy.asarray(mod.log(x * x))
        calls[mod.__name__] = (seen, r)
    assert calls["flamefuse.lazy"][0] == calls["numpy"][0] != []
    numpy.testing.assert_array_equal(calls["flamefuse.lazy"][1], calls["numpy"][1])


def test_loop_under_errstate_raise_stops_where_numpy_stops():
    def run(mod):
        y = mod.linspace(-1.0, 1.0, 50) * 1.0
        z = mod.zeros(50)
        steps = 0
        try:
            with mod.errstate(all="raise"):
                for k in range(5):
                    z += y * k
                    steps += 1
                    if k == 3:
                        z = z / (y * 0)
        except FloatingPointError as ex:
            return steps, str(ex), numpy.asarray(z).copy()
        return steps, None, numpy.asarray(z).copy()
    want, got = run(numpy), run(lazy)
    assert got[:2] == want[:2] and want[1] is not None
    numpy.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("exponent", [-1, numpy.int64(-2)])
def test_integer_power_of_a_negative_exponent_raises_at_the_call(exponent):
    for mod in (numpy, lazy):
        a = mod.arange(-3, 40) * 1
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            a ** exponent
        b = mod.arange(1, 40) * 1
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            b **= exponent


def test_integer_power_of_exponent_arrays():
    e = numpy.arange(40) % 5 - 1                          # holds -1
    for mod in (numpy, lazy):
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            mod.arange(40) ** mod.asarray(e)
    numpy.testing.assert_array_equal(numpy.asarray(2 ** lazy.arange(40)), 2 ** numpy.arange(40),
                                     strict=True)
    numpy.testing.assert_array_equal(numpy.asarray(lazy.arange(40) ** lazy.arange(40) % 7),
                                     numpy.arange(40) ** numpy.arange(40) % 7, strict=True)


def _complex_program(mod):
    z = mod.exp(1j * mod.linspace(0.0, 1.0, 30))
    w = z.copy()
    w.real += 1
    w.imag *= -2
    pending = w * 2                      # recorded before the next write through a view
    w.real = w.imag * 3
    x = mod.arange(8.0) * 1.0
    x.real = 5
    v = x.view(mod.int64)
    x += 1                               # seen through v
    v[0] = 0                             # seen through x
    return [w, pending, x, v, w.real * 1, w.imag * 1]


def test_real_and_imag_views_write_through():
    want, got = _complex_program(numpy), _complex_program(lazy)
    for g, w in zip(got, want):
        numpy.testing.assert_array_equal(numpy.asarray(g), w, strict=True)
    with pytest.raises(TypeError, match="imaginary part"):
        x = lazy.arange(4.0) * 1.0
        x.imag = 1


@pytest.mark.parametrize("case", range(6))
def test_broadcast_errors_are_numpys(case):
    def run(mod):
        x = mod.ones(4) * 1.0
        calls = [lambda: mod.ones(3) * 1.0 + mod.ones(4),
                 lambda: mod.add(mod.ones(3) * 1.0, 2, out=x),
                 lambda: mod.add(mod.ones((2, 3)) * 1.0, mod.ones(4)),
                 lambda: mod.where(mod.ones(3) > 0, mod.ones(4), 0),
                 lambda: x[:3].__iadd__(mod.ones(4)),
                 lambda: x[:3].__imul__(mod.ones((2, 3)))]
        with pytest.raises(ValueError) as info:
            calls[case]()
        return str(info.value)
    assert run(lazy) == run(numpy)


def test_assigning_a_wrong_shape_is_numpys_error():
    for mod in (numpy, lazy):
        x = mod.ones(4) * 1.0
        with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(4,\) into shape \(3,\)"):
            x[:3] = mod.ones(4) * 2.0


def test_mean_of_an_empty_array_warns_like_numpy():
    def run(mod):
        e = mod.zeros((0, 3))
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            r = [e.mean(), e.mean(axis=0)]
        return r, [str(w.message) for w in ws if issubclass(w.category, RuntimeWarning)]
    (got, got_w), (want, want_w) = run(lazy), run(numpy)
    assert got_w == want_w
    for g, w in zip(got, want):
        numpy.testing.assert_array_equal(numpy.asarray(g), w)


def test_timing_numpy_on_scratch_arrays_warns_nothing():
    from flamefuse.runtime import adapt
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        for name, loop in (("prod", ("float64", "float64")), ("prod", ("int64", "int64"))):
            adapt._time_numpy("reduce", name, loop, 1 << 12)
        adapt._time_numpy("ew", "exp", ("float64", "float64"), 1 << 16)
    assert [str(w.message) for w in ws] == []


def _outcome(f):
    try:
        return ("value", numpy.asarray(f()).tolist())
    except Exception as ex:  # noqa: BLE001  (the error is the result compared)
        return (type(ex).__name__, str(ex))


@pytest.mark.parametrize("case", range(9))
def test_python_ints_an_integer_dtype_cannot_hold(case):
    """``int8_array + 300``: NumPy raises OverflowError at the call (the recorded operation
    raised it at a later flush, anywhere); comparisons and ``where`` give NumPy's answer; a
    write of 300 into int8 raises (the recorded copy wrapped it to 44)."""
    def run(mod):
        a = mod.arange(40, dtype=mod.int8) * 1
        b = mod.arange(40, dtype=mod.int8) * 1
        calls = [lambda: a + 300, lambda: a < 300, lambda: a == -300, lambda: mod.where(a > 3, 300, a),
                 lambda: mod.maximum(a, 300), lambda: b.__setitem__(slice(None), 300),
                 lambda: b.__setitem__(b > 3, 300), lambda: b.fill(-129),
                 lambda: mod.zeros(40, mod.uint8) - 1]
        return _outcome(calls[case]), numpy.asarray(b).tolist()
    assert run(lazy) == run(numpy)


def test_mean_of_integers_adds_in_float64():
    """NumPy's mean of int64/uint64/bool adds in float64; the recorded mean added in the
    integer dtype (uint64 wrapped: 9.3e8 for 1.4e18)."""
    def run(mod):
        a = mod.array([2**63 + 5, 2**63 + 9, 7] * 20, dtype=mod.uint64) * 1
        b = mod.array([2**62, 2**62, 2**62, 3] * 10, dtype=mod.int64) * 1
        c = mod.arange(60, dtype=mod.int8).reshape(6, 10) * 1
        return [a.mean(), b.mean(), (b > 3).mean(), c.mean(axis=0), c.mean(axis=1, keepdims=True)]
    for g, w in zip(run(lazy), run(numpy)):
        numpy.testing.assert_array_equal(numpy.asarray(g), w)


def test_array_of_a_list_converts_to_the_dtype_directly():
    """``np.array([2**63 + 5], dtype=np.uint64)`` went through float64 first (2**63); NumPy
    converts each value, and raises for ``[300]`` as int8 or ``copy=False`` of a list."""
    calls = [lambda m: m.array([2**63 + 5, 7], dtype=m.uint64), lambda m: m.asarray([2**63 + 9], dtype=m.uint64),
             lambda m: m.array([300], dtype=m.int8), lambda m: m.array([1, 2], copy=False),
             lambda m: m.asarray([1.7, -2.5], dtype=int), lambda m: m.array(["1.5", "2"], dtype=float)]
    for f in calls:
        assert _outcome(lambda: f(lazy)) == _outcome(lambda: f(numpy))


def _shared_memory_program(mod):
    m = numpy.arange(16.0).reshape(4, 4)
    a, b = mod.asarray(m), mod.asarray(m.T)
    a += b                                     # NumPy: as if b were copied first
    arr = numpy.arange(12.0)
    p, q = mod.asarray(arr[1:]), mod.asarray(arr[:-1])
    p += q
    arr2 = numpy.arange(12.0)
    x, y = mod.asarray(arr2[:-1]), mod.asarray(arr2[1:])
    y[:] = x * 2 + 1                           # reads x before any of y is written
    own = numpy.arange(10.0)
    o1, o2 = mod.asarray(own), mod.asarray(own[::-1])     # the owner first, then a view
    o1 += o2
    return [numpy.asarray(v).copy() for v in (a, p, q, x, y, o1)]


def test_lazy_arrays_over_one_numpy_array_overlap_as_numpy_arrays_do():
    """Two ``asarray`` of views of one NumPy array were independent bases to the recorder:
    ``a += a.T`` through them streamed through updated values (a cumulative sum)."""
    for g, w in zip(_shared_memory_program(lazy), _shared_memory_program(numpy)):
        numpy.testing.assert_array_equal(g, w, strict=True)


def test_views_of_other_dtypes_update_in_place_like_numpy():
    def run(mod):
        z = mod.exp(1j * mod.linspace(0.0, 3.0, 40))
        zr = z.real
        zr += z.imag[::-1]
        v = mod.arange(40.0) * 1
        w = v.view(mod.int64)
        w[1:] += w[:-1]
        return [numpy.asarray(z).copy(), numpy.asarray(v).copy()]
    for g, w in zip(run(lazy), run(numpy)):
        numpy.testing.assert_array_equal(g, w, strict=True)


def test_float32_product_overflows_as_numpys():
    """A float32 product multiplied in float64: [1e30, 1e30, 0, ...].prod() gave 0, NumPy nan."""
    def run(mod):
        x = mod.asarray(numpy.array([1e30, 1e30, 0.0] + [1.5] * 60, dtype=numpy.float32)) * 1
        y = mod.asarray(numpy.linspace(0.5, 1.5, 64, dtype=numpy.float32)) * 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return [x.prod(), x[x >= 0].prod(), y.prod(), x.reshape(-1, 1).prod(axis=0)]
    got, want = run(lazy), run(numpy)
    numpy.testing.assert_array_equal(numpy.asarray(got[0]), want[0], strict=False)
    numpy.testing.assert_array_equal(numpy.asarray(got[1]), want[1], strict=False)
    assert numpy.asarray(got[2]).dtype == numpy.float32
    numpy.testing.assert_allclose(numpy.asarray(got[2]), want[2], rtol=1e-5)
    numpy.testing.assert_array_equal(numpy.asarray(got[3]), want[3])


def test_method_keyword_forms_are_numpys():
    """``x.reshape(4, 3, order="F")``, ``x.ravel("F")``, ``x.flatten("F")``,
    ``x.copy(order="F")``, ``x.astype(t, casting="safe")`` raised TypeError (the lazy methods
    took no such keywords); they are NumPy's methods now, views staying views."""
    def run(mod):
        x = (mod.arange(12.0).reshape(3, 4) - 5) * 1
        r = [x.reshape(4, 3, order="F"), x.reshape((2, 6), order="F"), x.ravel("F"),
             x.T.ravel(order="K"), x.flatten("F"), x.copy(order="F").sum(axis=0),
             x.astype(mod.float32, casting="same_kind"), x.reshape(-1, copy=False)]
        r.append(_outcome(lambda: x.astype(mod.int32, casting="safe")))
        r.append(_outcome(lambda: x.T.reshape(-1, copy=False)))
        z = x.T.ravel("F")              # a view of x (NumPy's): writes reach x
        z[1] = -50.0
        r.append(x * 1)
        return r
    for g, w in zip(run(lazy), run(numpy)):
        if isinstance(w, tuple):
            assert g == w
        else:
            numpy.testing.assert_array_equal(numpy.asarray(g), w, strict=True)


def test_linspace_retstep_and_fortran_ordered_numpy_results():
    """``np.linspace(..., retstep=True)`` crashed (a tuple wrapped as an array); Fortran-ordered
    NumPy results (``zeros(order="F")``, ``copy(order="F")``, ``asarray(f_array)``) were copied
    to C order: flags differed and ``asarray`` of a Fortran array no longer shared its memory."""
    def run(mod):
        y, step = mod.linspace(0.0, 1.0, 5, retstep=True)
        f = numpy.asfortranarray(numpy.arange(12.0).reshape(3, 4))
        a = mod.asarray(f)
        a += 1                                   # NumPy: writes f
        x = mod.arange(12.0).reshape(3, 4) * 1
        return [numpy.asarray(y).copy(), step, mod.zeros((2, 3), order="F").flags.f_contiguous,
                x.copy(order="F").flags.f_contiguous, mod.asarray(x, order="F").flags.f_contiguous,
                f.copy(), numpy.asarray(a).ravel(order="K").copy()]
    got, want = run(lazy), run(numpy)
    for g, w in zip(got, want):
        numpy.testing.assert_array_equal(g, w, strict=True)


def test_positional_outputs_and_in_place_matmul():
    """``np.multiply(x, 2, x)`` / ``np.negative(b, b)`` (outputs by position) raised TypeError in
    resolve_dtypes; ``a @= m`` raised AttributeError (no ``__imatmul__``)."""
    def run(mod):
        a = mod.arange(6.0) * 1
        b = mod.arange(6.0)[::-1] * 1
        r1 = mod.multiply(a, 2, a)
        mod.negative(b, b)
        q, rem = mod.divmod(a, 4, mod.empty(6), mod.empty(6))
        m = mod.ones((3, 3)) * 2
        m @= mod.arange(9.0).reshape(3, 3)
        err = _outcome(lambda: mod.add(a, 1, a, out=a))
        bad = _outcome(lambda: m.__imatmul__(mod.ones((3, 2))))
        return [r1 is a, numpy.asarray(a).copy(), numpy.asarray(b).copy(), numpy.asarray(q).copy(),
                numpy.asarray(rem).copy(), numpy.asarray(m).copy(), err[0], bad[0]]
    got, want = run(lazy), run(numpy)
    for g, w in zip(got, want):
        numpy.testing.assert_array_equal(g, w, strict=True)


def _singular(n):
    a = numpy.eye(n) * 4.0 + numpy.arange(n * n).reshape(n, n) % 3
    a[n - 1] = a[0]                 # rows equal: singular, fails at the last pivot or before
    return a


def _indefinite(n):
    a = numpy.eye(n) * 4.0
    a[n // 2, n // 2] = -1.0        # the leading minor of order n // 2 + 1 is not positive
    return a


def _lower_singular(n):
    a = numpy.tril(numpy.ones((n, n))) + numpy.eye(n)
    a[n // 2, n // 2] = 0.0
    return a


@pytest.mark.parametrize("n", [2, 7, 64])
@pytest.mark.parametrize("case", ["np_inv", "np_solve", "np_cholesky", "sp_inv", "sp_cholesky",
                                  "sp_cho_factor", "sp_solve_triangular"])
def test_recorded_linalg_errors_have_the_librarys_message(case, n):
    """A recorded linear-algebra call that fails raises ``LinAlgError`` with NumPy's or SciPy's
    own text ('Singular matrix', 'Matrix is not positive definite', SciPy's 'k-th leading
    minor ...'), not a message of flamefuse's (it named the call and the row)."""
    import scipy.linalg as sla
    from flamefuse.lazy import scipy_linalg as lsla
    b = numpy.ones(n)
    fn, lfn, args = {
        "np_inv": (numpy.linalg.inv, lazy.linalg.inv, (_singular(n),)),
        "np_solve": (numpy.linalg.solve, lazy.linalg.solve, (_singular(n), b)),
        "np_cholesky": (numpy.linalg.cholesky, lazy.linalg.cholesky, (_indefinite(n),)),
        "sp_inv": (sla.inv, lsla.inv, (_singular(n),)),
        "sp_cholesky": (lambda a: sla.cholesky(a, lower=True),
                        lambda a: lsla.cholesky(a, lower=True), (_indefinite(n),)),
        "sp_cho_factor": (sla.cho_factor, lsla.cho_factor, (_indefinite(n),)),
        "sp_solve_triangular": (lambda a, y: sla.solve_triangular(a, y, lower=True),
                                lambda a, y: lsla.solve_triangular(a, y, lower=True),
                                (_lower_singular(n), b)),
    }[case]
    with pytest.raises(numpy.linalg.LinAlgError) as want:
        fn(*args)
    with pytest.raises(numpy.linalg.LinAlgError) as got:
        r = lfn(*(lazy.asarray(a) * 1.0 for a in args))     # pending inputs: the call is recorded
        lazy.flush()
        numpy.asarray(r[0] if isinstance(r, tuple) else r)
    assert str(got.value) == str(want.value)


def _bases(mod, n):
    """``.base`` facts of views, as booleans comparable between NumPy and flamefuse.lazy."""
    a = mod.arange(float(n)) * 1.0             # recorded (pending) when lazy
    b = a[1:]
    c = b[::2]
    m = a.reshape(2, n // 2)
    e = mod.arange(float(n)).reshape(2, n // 2)
    raw = numpy.arange(float(n))
    w, wv = mod.asarray(raw), mod.asarray(raw[1:])
    return {"owner": a.base is None, "b": b.base is a, "c": c.base is a, "m": m.base is a,
            "mT": m.T.base is a, "m_row": m[1].base is a, "ravel": m.ravel().base is a,
            "diag": mod.diagonal(m).base is a, "e": e.base is not None, "e_row": e[0].base is e.base,
            "result": (a + 1).base is None, "copy": a.copy().base is None,
            "w": w.base is None, "wv": wv.base is raw, "wv_sub": wv[1:].base is raw,
            "computed": a[2:].base is a, "values": bool((c - a[1::2] == 0).all())}


@pytest.mark.parametrize("n", [8, 40])
def test_base_of_a_view_is_the_array_that_owns_the_memory(n):
    """A lazy view's ``.base`` is NumPy's: the array at the root of the chain of views (it was
    the recorder's flat buffer, an ndarray no script had)."""
    want = _bases(numpy, n)
    got = _bases(lazy, n)
    assert got == want
    assert all(want.values())


def _warned(mod, body):
    """The RuntimeWarnings' texts of ``body(mod)`` inside ``catch_warnings(record=True)``: the
    script's own ``warnings`` module (flamefuse fuse's, whose blocks are sync points, for lazy)."""
    from flamefuse.lazy import fpstate
    w = warnings if mod is numpy else fpstate.warnings_module()
    with w.catch_warnings(record=True) as ws:
        w.simplefilter("always")
        out = body(mod)
    return [str(m.message) for m in ws if issubclass(m.category, RuntimeWarning)], out


def _programs():
    def divide_log_sqrt(np):
        x = _x(np)
        return [1.0 / x, np.log(x), np.sqrt(x), x / x]

    def overflow(np):
        big = np.full(50, 1e300) * 1.0
        return [big * big, np.exp(np.linspace(0.0, 1000.0, 50)), (big * 10.0).sum()]

    def integer_division_by_zero(np):
        k = np.arange(40) - 20
        return [k // (k % 5), k % (k % 4)]

    def in_place_update(np):            # the flush's inputs are overwritten: named, not re-run
        x = _x(np)
        y = np.ones(41) * 1.0
        y += 1.0 / x
        return [y]

    def ignored_inside_errstate(np):    # recorded under 'ignore': no warning at a later flush
        x = _x(np)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.log(x) / x
        return [r, r * 2.0]

    def errstate_decorator(np):
        x = _x(np)

        @np.errstate(divide="ignore")
        def reciprocal(v):
            return 1.0 / v
        return [reciprocal(x), reciprocal(x + 0.0) * 2.0]

    def clean(np):
        x = _x(np) + 3.0
        return [1.0 / x, np.log(x)]
    return [divide_log_sqrt, overflow, integer_division_by_zero, in_place_update,
            ignored_inside_errstate, errstate_decorator, clean]


@pytest.mark.parametrize("body", _programs(), ids=lambda f: f.__name__)
def test_fused_operations_warn_as_numpy_in_its_default_error_state(body):
    """NumPy's default error state warns (divide by zero, overflow, invalid value) at each call
    that raises the floating-point flag; the fused kernels' flags are read after them and give
    NumPy's warnings, in order, inside the ``catch_warnings`` block of the operations (a sync
    point), and none for operations recorded under ``np.errstate(...='ignore')``."""
    want, wv = _warned(numpy, body)
    got, gv = _warned(lazy, body)
    assert got == want
    for g, w in zip(gv, wv):
        numpy.testing.assert_allclose(numpy.asarray(g), w, rtol=1e-15)
    assert bool(want) == (body.__name__ not in ("ignored_inside_errstate", "errstate_decorator", "clean"))


def test_a_recorded_call_of_a_matrix_that_is_not_square_is_the_librarys():
    """NumPy's LinAlgError without a prefix, SciPy's own ValueError texts, and SciPy's LU of an
    M x N matrix (it factors one; the recorded lu_factor raised LinAlgError)."""
    from flamefuse.lazy import linalg as lazy_np_linalg
    from flamefuse.lazy import scipy_linalg as lazy_sla
    m = numpy.arange(6.0).reshape(2, 3)
    pairs = [(lazy_np_linalg.inv, numpy.linalg.inv), (lazy_np_linalg.cholesky, numpy.linalg.cholesky),
             (lazy_sla.inv, scipy.linalg.inv), (lazy_sla.cholesky, scipy.linalg.cholesky),
             (lazy_sla.cho_factor, scipy.linalg.cho_factor)]
    for ours, theirs in pairs:
        with pytest.raises(Exception) as want:
            theirs(m)
        with pytest.raises(want.type) as got:
            ours(lazy.asarray(m) + 0.0)
        assert str(got.value) == str(want.value)
    lu, piv = lazy_sla.lu_factor(lazy.asarray(m) * 1.0)
    want_lu, want_piv = scipy.linalg.lu_factor(m)
    assert numpy.array_equal(numpy.asarray(lu), want_lu) and numpy.array_equal(numpy.asarray(piv), want_piv)
