"""Random short programs of numpy.linalg / scipy.linalg calls, run under NumPy and flamefuse.lazy.

A program is a tuple of statements (source text, guarded): each assigns one name from the
inputs or earlier names (``np.linalg.cholesky``, ``inv``, ``solve``, ``det``, ``slogdet``,
``lstsq``, ``sla.solve_triangular``, ``cho_factor`` / ``cho_solve``, ``lu_factor`` / ``lu_solve``,
``@``, ``.T``, element-wise arithmetic, slices, names reused and overwritten), each call written
in one of the import styles people use (``np.linalg.``, ``la.`` for ``import numpy.linalg as
la``, bare names for ``from numpy.linalg import ...`` / ``from scipy.linalg import ...``:
:func:`restyle`); a guarded one
is wrapped in ``try: ... except np.linalg.LinAlgError: name = None``. :func:`source` makes
one module of it, which :func:`run` executes with ``np``/``sla`` bound to NumPy/SciPy or to
flamefuse.lazy (the same code: ``guarded()`` sees the program's own ``try`` blocks), and
reports the exception (type, statement) and every name's value. The inputs
(:func:`inputs`) are well conditioned SPD, triangular, general, symmetric indefinite
matrices and exactly singular ones, float32/float64/complex128, in C, Fortran or strided
layout. :func:`compare` checks each name against NumPy's within ``100 eps n kappa`` (kappa:
the product of the condition numbers of the matrices the calls up to that statement solved
with; values whose bound is meaningless are compared by shape and dtype only).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy
import scipy.linalg
from hypothesis import strategies as st

SIZES = (1, 2, 7, 64, 129)
DTYPES = ("float64", "float32", "complex128")
LAYOUTS = ("C", "F", "strided")
MATRICES = ("S", "L", "U", "G", "N", "Z", "Ls")       # SPD, lower, upper, general, indefinite, singular x2
RHS = ("b", "B")                                       # a vector, an n x 3 matrix


@dataclass(frozen=True)
class Case:
    n: int
    dtype: str
    layout: str
    seed: int
    stmts: tuple      # ((text, guarded), ...)


def _orthogonal(rng, n, dtype):
    x = rng.standard_normal((n, n))
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal((n, n))
    q, r = numpy.linalg.qr(x)
    return q


def inputs(case: Case) -> dict:
    """The input arrays of a case (NumPy arrays in the case's layout)."""
    n, rng = case.n, numpy.random.default_rng(case.seed)
    cplx = case.dtype == "complex128"

    def rand(*shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if cplx else x

    q1, q2 = _orthogonal(rng, n, case.dtype), _orthogonal(rng, n, case.dtype)
    d = rng.uniform(1, 2, n)
    spd = (q1 * d) @ q1.conj().T
    spd = (spd + spd.conj().T) / 2
    sign = numpy.where(numpy.arange(n) % 2 == 1, -1.0, 1.0) if n > 1 else numpy.array([-1.0])
    ind = (q1 * (d * sign)) @ q1.conj().T
    ind = (ind + ind.conj().T) / 2
    low = numpy.tril(rand(n, n), -1) / (2 * n) + numpy.diag(d + 0j if cplx else d)
    gen = (q1 * d) @ q2
    sing = gen.copy()
    sing[:, n // 2] = 0
    lsing = low.copy()
    lsing[n // 2, n // 2] = 0
    vals = {"S": spd, "L": low, "U": low.T.copy(), "G": gen, "N": ind, "Z": sing, "Ls": lsing,
            "b": rand(n), "B": rand(n, 3)}
    out = {}
    for k, v in vals.items():
        v = v.astype(case.dtype)
        if case.layout == "F":
            v = numpy.asfortranarray(v)
        elif case.layout == "strided":
            big = numpy.zeros(tuple(2 * s for s in v.shape), v.dtype)
            big[tuple(slice(None, None, 2) for _ in v.shape)] = v
            v = big[tuple(slice(None, None, 2) for _ in v.shape)]
        out[k] = v
    return out


# -- programs ------------------------------------------------------------------------------

def source(case: Case) -> tuple[str, dict]:
    """(module text, {line: statement index}). Each statement is preceded by ``_m(k)``."""
    where = {}
    lines = [f"{k} = np.asarray({k}_)" for k in MATRICES + RHS]
    for k, (text, guarded) in enumerate(case.stmts):
        lines.append(f"_m({k})")
        if guarded:
            target = text.split(" = ", 1)[0]
            lines.append("try:")
            lines.append("    " + text)
            where[len(lines)] = k
            lines.append("except np.linalg.LinAlgError:")
            lines.append(f"    {target} = None")
        else:
            lines.append(text)
            where[len(lines)] = k
    return "\n".join(lines) + "\n", where


def operands(text: str) -> list[tuple[str, str]]:
    """The square matrices a statement solves with: (name, which part: full/lower/upper)."""
    m = re.search(r"(cholesky|inv|solve|solve_triangular|cho_factor|lu_factor|det|slogdet|lstsq)\((\w+)", text)
    if not m or "lu_solve" in text or "cho_solve" in text:
        m2 = re.search(r"(cho_solve|lu_solve)\((\w+)", text)
        return [(m2.group(2), "factor")] if m2 else []
    fn, name = m.groups()
    if fn == "solve_triangular":
        return [(name, "lower" if "lower=True" in text else "upper")]
    return [(name, "full")]


def _cond(x, part) -> float:
    if isinstance(x, tuple):
        x = x[0]
    x = numpy.asarray(x)
    if x.ndim != 2 or x.shape[0] != x.shape[1] or x.dtype.kind not in "fc":
        return 1.0
    x = x.astype(numpy.complex128 if x.dtype.kind == "c" else numpy.float64)
    if part in ("lower", "factor"):
        x = numpy.tril(x) if part == "lower" else x
    if part == "upper":
        x = numpy.triu(x)
    if part == "factor":
        return 1.0 + numpy.linalg.cond(numpy.tril(x)) * numpy.linalg.cond(numpy.triu(x))
    if not numpy.isfinite(x).all():
        return numpy.inf
    with numpy.errstate(all="ignore"):
        c = numpy.linalg.cond(x)
    return c if numpy.isfinite(c) else numpy.inf


def run(case: Case, lib: str):
    """Run the program: (exception (type name, statement index or None: after the program) or
    None, {name: value as NumPy}, {statement: kappa}). ``lib``: "numpy" or "lazy"."""
    import warnings

    text, where = source(case)
    code = compile(text, "<fuzz>", "exec")
    kappa, at = {}, [1.0]
    ns: dict = {f"{k}_": v for k, v in inputs(case).items()}
    if lib == "numpy":
        def mark(k):
            for name, part in operands(case.stmts[k][0]):
                if name in ns and ns[name] is not None:
                    at[0] *= _cond(ns[name], part)
            kappa[k] = at[0]
        ns.update(np=numpy, sla=scipy.linalg, _m=mark, **_names(numpy.linalg, scipy.linalg))
    else:
        import flamefuse.lazy as lazy
        import flamefuse.lazy.scipy_linalg as lsla
        ns.update(np=lazy, sla=lsla, _m=lambda k: None, **_names(lazy.linalg, lsla))
    err = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, ns)
            if lib != "numpy":
                lazy.flush()
        except Exception as e:            # noqa: BLE001 (compared with NumPy's)
            err = (type(e).__name__, _statement(e, where))
        values = {}
        for name, v in ns.items():
            if name.startswith("_") or name.endswith("_") or name in ("np", "sla", "la") or name in BARE:
                continue
            try:
                values[name] = _as_numpy(v)
            except Exception as e:        # noqa: BLE001
                values[name] = ("error", type(e).__name__)
    return err, values, kappa


def _statement(e: BaseException, where: dict):
    tb, line = e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<fuzz>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return where.get(line)


def _as_numpy(v):
    if isinstance(v, tuple):
        return tuple(_as_numpy(x) for x in v)
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return numpy.array(v.numpy() if hasattr(v, "numpy") else v)


def compare(case: Case) -> None:
    want_err, want, kappa = run(case, "numpy")
    got_err, got, _ = run(case, "lazy")
    text = source(case)[0]
    assert got_err == want_err, f"exception {got_err} where NumPy has {want_err}\n{text}"
    assigned = {}
    for k, (stmt, _) in enumerate(case.stmts):
        if want_err is not None and want_err[1] is not None and k >= want_err[1]:
            break
        assigned[stmt.split(" = ", 1)[0]] = k
    eps = numpy.finfo(numpy.dtype(case.dtype)).eps
    for name in sorted(want):
        k = assigned.get(name)
        kap = kappa.get(k, 1.0) if k is not None else 1.0
        cho = k is not None and "cho_factor(" in case.stmts[k][0]
        lower = k is not None and "lower=True" in case.stmts[k][0]
        _same(got.get(name, "<missing>"), want[name], 100 * eps * max(case.n, 1) * max(kap, 1.0),
              f"{name} (statement {k})\n{text}", cho, lower)


def _same(got, want, tol, where, cho=False, lower=False):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{where}: {got!r} vs {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, tol, where, cho and i == 0, lower)
        return
    if not isinstance(want, numpy.ndarray):
        assert type(got) is type(want) and got == want, f"{where}: {got!r} vs {want!r}"
        return
    assert isinstance(got, numpy.ndarray), f"{where}: {got!r} vs NumPy's array"
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{where}: {got.shape} {got.dtype} vs {want.shape} {want.dtype}"
    if cho and want.ndim == 2:                   # SciPy leaves the other triangle arbitrary
        got, want = (numpy.tril(got), numpy.tril(want)) if lower else (numpy.triu(got), numpy.triu(want))
    if want.dtype.kind not in "fc":
        assert numpy.array_equal(got, want), f"{where}: {got} vs {want}"
        return
    if tol > 0.1:          # conditioning makes the values meaningless (overflow differs too)
        return
    fin = numpy.isfinite(want)
    assert numpy.array_equal(numpy.isfinite(got), fin), f"{where}: finite where NumPy's is not"
    if not fin.all() or not want.size:
        return
    scale = max(1.0, float(numpy.abs(want).max()))
    err = float(numpy.abs(got - want).max())
    assert err <= tol * scale, f"{where}: max error {err:.3g} > {tol * scale:.3g}"


# -- the strategy --------------------------------------------------------------------------

CALLS_M = ("np.linalg.cholesky({M})", "np.linalg.inv({M})", "sla.inv({M})", "np.linalg.det({M})",
           "np.linalg.slogdet({M})", "sla.cholesky({M}, lower={lo})", "{M}.T", "{M} @ {M2}",
           "{M}.T @ {M}", "{M} + {M2}", "2 * {M} - {M2}", "{M}[::-1, ::-1]", "np.linalg.solve({M}, {M2})",
           "sla.solve_triangular({M}, {M2}, lower={lo}, trans={tr})",
           "sla.solve_triangular({M}, {M}, lower={lo})", "np.linalg.lstsq({M}, {M2}, rcond=None)")
CALLS_X = ("np.linalg.cholesky(np.stack([{M}, {M2}]))", "np.linalg.inv(np.stack([{M}, {M2}]))",
           "np.linalg.solve(np.stack([{M}, {M2}]), np.stack([{M2}, {M}]))")  # stacked: not operands again
CALLS_R = ("np.linalg.solve({M}, {R})", "sla.solve_triangular({M}, {R}, lower={lo}, trans={tr})",
           "{M} @ {R}", "{R} * 0.5", "{M}[:, :1]", "sla.solve({M}, {R})")


STYLES = ("np", "la", "bare")
BARE = ("cholesky", "inv", "solve", "det", "slogdet", "lstsq", "cho_factor", "cho_solve")


def restyle(text: str, style: str) -> str:
    """A statement written with another import style: ``import numpy.linalg as la`` (``la.``) or
    ``from numpy.linalg import cholesky, ...`` / ``from scipy.linalg import cho_factor, cho_solve``
    (bare names)."""
    if style == "la":
        return text.replace("np.linalg.", "la.")
    if style == "bare":
        for name in BARE:
            text = re.sub(rf"\b(np\.linalg|sla)\.{name}\(", f"{name}(", text)
    return text


def _names(linalg, sla) -> dict:
    """The names a program's import styles bind (see :func:`restyle`)."""
    out = {"la": linalg}
    for name in BARE:
        out[name] = getattr(sla if name.startswith("cho_") else linalg, name)
    return out


@st.composite
def cases(draw) -> Case:
    n = draw(st.sampled_from(SIZES))
    dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(LAYOUTS))
    seed = draw(st.integers(0, 2 ** 16))
    mats, rhs, chos, lus = list(MATRICES), list(RHS), [], []
    shapes = {"b": (n,), "B": (n, 3)}
    stmts = []
    for k in range(draw(st.integers(2, 6))):
        fresh = f"v{k}"
        kind = draw(st.sampled_from(("M", "M", "R", "R", "cho", "lu", "X")))
        m, m2 = draw(st.sampled_from(mats)), draw(st.sampled_from(mats))
        lo = draw(st.booleans())
        tr = draw(st.sampled_from((0, 1, "'T'")))
        if kind == "X":
            text, out = draw(st.sampled_from(CALLS_X)).format(M=m, M2=m2), "s"
        elif kind == "M":
            tmpl = draw(st.sampled_from(CALLS_M))
            text = tmpl.format(M=m, M2=m2, lo=lo, tr=tr)
            out = "s" if "det(" in tmpl or "lstsq(" in tmpl else "M"
        elif kind == "R":
            r = draw(st.sampled_from(rhs))
            tmpl = draw(st.sampled_from(CALLS_R))
            text = tmpl.format(M=m, R=r, lo=lo, tr=tr)
            out = "R"
            shapes[fresh] = (n, 1) if "[:, :1]" in tmpl else shapes.get(r)
        elif kind == "cho":
            if chos and draw(st.booleans()):
                r = draw(st.sampled_from(rhs))
                text, out = f"sla.cho_solve({draw(st.sampled_from(chos))}, {r})", "R"
                shapes[fresh] = shapes.get(r)
            else:
                text, out = f"sla.cho_factor({m}, lower={lo})", "cho"
        else:
            if lus and draw(st.booleans()):
                r = draw(st.sampled_from(rhs))
                text, out = f"sla.lu_solve({draw(st.sampled_from(lus))}, {r})", "R"
                shapes[fresh] = shapes.get(r)
            else:
                text, out = f"sla.lu_factor({m})", "lu"
        # the target: a fresh name, or (sometimes) an existing one of the same kind overwritten
        pool = {"M": mats, "R": rhs, "cho": chos, "lu": lus, "s": []}[out]
        target = fresh
        guarded = draw(st.integers(0, 3)) == 0
        if pool and not guarded and draw(st.integers(0, 3)) == 0:
            cand = draw(st.sampled_from(pool))
            if out != "R" or shapes.get(cand) == shapes.get(fresh):
                target = cand
        if target != fresh and out == "R":
            shapes[target] = shapes[fresh]
        text = restyle(text, draw(st.sampled_from(STYLES)))
        stmts.append((f"{target} = {text}", guarded))
        if guarded:                       # the (fresh) name may be None afterwards: no operand
            continue
        if target == fresh and pool is not None and out != "s":
            pool.append(fresh)
    return Case(n, dtype, layout, seed, tuple(stmts))
