"""The Numba target: kernel IR -> Python source of one ``@_jit`` (``numba.njit(cache=True)``) kernel.

``render_kernel(kernel) -> str`` writes the compiled kernel ``_k_<name>``
(operands in storage order, then the block size, the routine table and the
work arrays), its table ``_CALL_<name>`` (:func:`call_table`) and its checked
wrapper ``<name>(*operands, block_size=None) -> int`` (None: the module's tuned
``block_size_for(n)``), which calls the kernel through ``_call`` of
:mod:`flamefuse.blas_call` (checks, pivots, work arrays, BLAS threads: the
kernel allocates nothing, so it also compiles into a native library,
:mod:`flamefuse.synth.native_chain`).
Matrices are Fortran-ordered; the wrapper hands the kernel each matrix transposed
(``A.T``, C-contiguous, parameter ``A_t``) and the kernel takes ``A_t.T`` back: Numba
types an array that is both C- and F-contiguous (a dimension of 1) as layout C and an
F-only one as F, so a kernel given the matrices themselves compiled once for n > 1 and
again for a 1 x 1 or n x 1 matrix; their transposes are typed C in both cases, and
``A_t.T`` is typed F, as before (one compilation per dtype).  A vector is used as an
n x 1 matrix; blocks are
addressed by pointer arithmetic for BLAS/LAPACK and by basic slices (views)
for the unblocked pieces.  The only copies are of one diagonal block into the
kernel's workspace ``ws`` (block size squared, allocated by the caller):
trsm by inverse (trtri + trmm) and ``ul`` (trmm).
"""
from __future__ import annotations

from flamefuse.codegen.ir import Kernel, Span, Stmt

# per dimension class: the loop's split points and its size (class 1 only in two-class kernels)
INDEX = {0: ("s1", "s2", "n"), 1: ("t1", "t2", "nt")}


def _bounds(c: int, k: int) -> tuple[str, str]:
    lo, hi, size = INDEX[c]
    return (("0", lo), (lo, hi), (hi, size))[k]


def _rows(s: Span) -> tuple[str, str]:
    return _bounds(s.ci, s.i) if s.i is not None else ("0", f"m_{s.operand}.shape[0]")


def _cols(s: Span) -> tuple[str, str]:
    return _bounds(s.cj, s.j) if s.j is not None else ("0", f"m_{s.operand}.shape[1]")


def _len(lo: str, hi: str) -> str:
    return hi if lo == "0" else f"{hi} - {lo}"


def _ptr(s: Span) -> str:
    r, c = _rows(s)[0], _cols(s)[0]
    off = " + ".join(x for x in (r if r != "0" else "", f"{c} * l_{s.operand}" if c != "0" else "") if x)
    return f"p_{s.operand} + es * ({off})" if off else f"p_{s.operand}"


def _view(s: Span) -> str:
    (r0, r1), (c0, c1) = _rows(s), _cols(s)
    return f"m_{s.operand}[{r0}:{r1}, {c0}:{c1}]"


def _dims(s: Span) -> tuple[str, str]:
    return _len(*_rows(s)), _len(*_cols(s))


def _ch(c: str) -> str:
    """The BLAS character constant; a transpose is always the conjugate transpose ``C`` (for real
    data BLAS reads it as ``T``), so complex operands get the Hermitian semantics."""
    return "_C" if c == "T" else "_" + c


def stmt_lines(st: Stmt) -> list[str]:
    t, ld = st.target, f"l_{st.target.operand}"
    m, n = _dims(t)
    row0 = _rows(t)[0]
    fail = ["if info != 0:", f"    return {row0} + info" if row0 != "0" else "    return info"]
    if st.op in ("potrf", "trtri", "lauum"):
        which = {"potrf": "_POTRF", "trtri": "_TRTRI", "lauum": "_LAUUM"}[st.op]
        call = f"_lapack(fp, {which}, iw, cw, {_ch(st.uplo)}, {_ch(st.diag)}, {m}, {_ptr(t)}, {ld})"
        return [call] if st.op == "lauum" else [f"info = {call}"] + fail
    if st.op == "trsyl":
        a, b = st.a, st.b
        return [f"if _trsyl(fp, iw, rw, cw, {_view(t)}, {_ptr(a)}, l_{a.operand}, {_ptr(b)}, l_{b.operand}, "
                f"{_ptr(t)}, {ld}) != 0:", "    near = 1"]
    if st.op == "lu":
        return [f"info = _lu(fp, iw, dw, cw, {_view(t)}, {_ptr(t)}, {ld})"] + fail
    if st.op == "ul":
        return [f"_ul(fp, iw, dw, cw, ws, {_view(t)}, {_ptr(t)}, {ld})"]
    if st.op == "getrf":
        a, w, pp = t.operand, _len(*_cols(t)), f"p_piv + 4 * {row0}"
        out = [f"info = _getrf(fp, iw, n - {row0}, {w}, {_ptr(t)}, {ld}, {pp})",
               "if info != 0 and info0 == 0:", f"    info0 = {row0} + info",
               f"_laswp(fp, iw, {_cols(t)[0]}, {_ptr(Span(a, t.i, None))}, {ld}, {w}, {pp})",
               f"_laswp(fp, iw, m_{a}.shape[1] - {_cols(t)[1]}, {_ptr(Span(a, t.i, t.j + 1))}, {ld}, {w}, {pp})"]
        out += [f"_laswp(fp, iw, m_{b}.shape[1], {_ptr(Span(b, t.i, None))}, l_{b}, {w}, {pp})" for b in st.swap]
        return out + [f"for i in range({row0}, {_rows(t)[1]}):", f"    piv[i] += {row0} - 1"]
    if st.op == "colperm":
        return [f"_colperm(m_{t.operand}, piv)"]
    if st.op in ("trsm", "trmm"):
        head = "_trsm(fp, iw, dw, cw, ws, " if st.op == "trsm" else "_trxm(fp, _TRMM, iw, dw, cw, "
        return [f"{head}{_ch(st.side)}, {_ch(st.uplo)}, {_ch(st.trans)}, "
                f"{_ch(st.diag)}, {m}, {n}, {float(st.alpha)}, {_ptr(st.a)}, l_{st.a.operand}, {_ptr(t)}, {ld})"]
    if st.op == "gemm":
        k = _dims(st.a)[1 if st.trans == "N" else 0]
        return [f"_gemm(fp, iw, dw, cw, {_ch(st.trans)}, {_ch(st.trans_b)}, {m}, {n}, {k}, {float(st.alpha)}, "
                f"{_ptr(st.a)}, l_{st.a.operand}, {_ptr(st.b)}, l_{st.b.operand}, {_ptr(t)}, {ld})"]
    if st.op == "syrk":
        k = _dims(st.a)[1 if st.trans == "N" else 0]
        return [f"_syrk(fp, iw, rw, cw, {_ch(st.uplo)}, {_ch(st.trans)}, {m}, {k}, {float(st.alpha)}, "
                f"{_ptr(st.a)}, l_{st.a.operand}, {_ptr(t)}, {ld})"]
    if st.op == "triacc":
        return [f"_triacc({_view(t)}, {float(st.alpha)}, {_view(st.a)}, {st.uplo == 'U'}, {st.diag == 'U'}, "
                f"{st.trans == 'T'}, {_view(st.b)}, {st.trans_b == 'T'}, {st.side == 'L'})"]
    if st.op == "copy":
        tri = {"G": 0, "L": 1, "U": 2}[st.uplo]
        return [f"_copy({_view(t)}, {_view(st.a)}, {float(st.alpha)}, {tri}, {st.trans == 'T'})"]
    raise ValueError(st.op)


def _size_of(kernel: Kernel, c: int = 0) -> tuple[str, int]:
    """(operand, axis) of the size of dimension class c: a dimension of the first operand
    partitioned along it."""
    if kernel.classes:
        return next((o, axis) for o, *dims in kernel.classes for axis, d in enumerate(dims) if d == c)
    o = kernel.operands[0]
    return o.name, 1 if o.partition == "columns" else 0


def _size(kernel: Kernel, c: int = 0, prefix: str = "") -> str:
    """The size of dimension class c (``prefix`` "m_": of its operand's view in the kernel, whose
    parameters are the matrices' transposes)."""
    name, axis = _size_of(kernel, c)
    return f"{prefix}{name}.shape[{axis}]"


def call_table(kernel: Kernel) -> tuple:
    """What the wrapper's ``_call`` (:mod:`flamefuse.blas_call`) needs to know of the variant:
    per operand (name, kind, partition), the dimension classes (None: one), the (operand index,
    axis) of its size n, and whether it is pivoted. A plain value: the module keeps it as
    ``_CALL_<variant>`` and a native library's layout records it."""
    names = [o.name for o in kernel.operands]
    name, axis = _size_of(kernel)
    classes = tuple(tuple(d) for _, *d in kernel.classes) if kernel.classes else None
    return (tuple((o.name, o.kind, o.partition) for o in kernel.operands), classes,
            (names.index(name), axis), bool(kernel.pivot))


def _forward(kernel: Kernel) -> tuple[bool, bool]:
    """Per dimension class: does its computed part grow from the top / left?"""
    start = kernel.direction.split("->")[0]
    return start[0] == "T", start[1] == "L"


def _two_index_loop(kernel: Kernel) -> list[str]:
    """Two dimension classes, each with its own split points moving its own way; the loop runs
    until both are through (a class already through has empty middle blocks)."""
    out = [f"    nt = {_size(kernel, 1, 'm_')}"]
    heads, conds, steps = [], [], []
    for c, fwd in enumerate(_forward(kernel)):
        lo, hi, size = INDEX[c]
        heads.append(f"    {lo} = 0" if fwd else f"    {hi} = {size}")
        conds.append(f"{lo} < {size}" if fwd else f"{hi} > 0")
        steps.append(f"        {hi} = min({lo} + nb, {size})" if fwd else f"        {lo} = max({hi} - nb, 0)")
    return out + heads + [f"    while {' or '.join(conds)}:"] + steps


def docstring_text(text: str) -> str:
    """``text`` escaped for the inside of a triple-quoted literal: backslashes and double quotes
    (a spec's description or names must never end the literal and become code)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _doc(kernel: Kernel, indent: str, extra: list[str]) -> list[str]:
    lines = ['"""' + docstring_text(kernel.doc[0]), ""] + [docstring_text(d) for d in kernel.doc[1:]]
    return [indent + x if x else "" for x in lines + extra] + [indent + '"""']


def render_kernel(kernel: Kernel) -> str:
    args = ", ".join(o.name for o in kernel.operands)
    # the kernel's parameters: a matrix comes transposed (the module doc: one Numba type per dtype)
    params = ", ".join(o.name if o.kind == "vector" else f"{o.name}_t" for o in kernel.operands)
    kargs = params + (", piv" if kernel.pivot else "")
    out = ["@_jit", f"def _k_{kernel.name}({kargs}, nb, fp, iw, dw, rw, cw, ws):"]
    out += _doc(kernel, "    ", [])
    for o in kernel.operands:
        view = f"{o.name}.reshape(({o.name}.shape[0], 1))" if o.kind == "vector" else f"{o.name}_t.T"
        out += [f"    m_{o.name} = {view}", f"    p_{o.name} = _addr(m_{o.name})",
                f"    l_{o.name} = max(1, m_{o.name}.shape[0])"]
    first = f"m_{kernel.operands[0].name}"
    out += [f"    n = {_size(kernel, 0, 'm_')}",
            f"    es = {first}.itemsize   # bytes per element: the precision"]
    if kernel.pivot:
        out += ["    p_piv = _addr(piv)", "    info0 = 0   # the first zero pivot (1-based), like getrf's info"]
    if any(st.op == "trsyl" for st in kernel.body):
        out += ["    near = 0   # 1: trsyl met close eigenvalues of A and -B (perturbed values were used)"]
    if kernel.classes:
        out += _two_index_loop(kernel)
    elif kernel.direction == "TL->BR":
        out += ["    s1 = 0", "    while s1 < n:", "        s2 = min(s1 + nb, n)"]
    else:
        out += ["    s2 = n", "    while s2 > 0:", "        s1 = max(s2 - nb, 0)"]
    for st in kernel.body:
        out.append(f"        # {st.text}")
        out += [f"        {line}" for line in stmt_lines(st)]
    forward = _forward(kernel)
    out += [f"        {'s1 = s2' if forward[0] else 's2 = s1'}"]
    if kernel.classes:
        out += [f"        {'t1 = t2' if forward[1] else 't2 = t1'}"]
    for st in kernel.finish:
        out.append(f"    # after the loop: {st.text}")
        out += [f"    {line}" for line in stmt_lines(st)]
    result = "info0" if kernel.pivot else "near" if any(st.op == "trsyl" for st in kernel.body) else "0"
    out += [f"    return {result}", "", ""]
    out += [f"_CALL_{kernel.name} = {call_table(kernel)!r}", "", ""]
    piv_kw = "piv=None, " if kernel.pivot else ""
    out += [f"def {kernel.name}({args}, *, {piv_kw}block_size=None):"]
    piv_doc = ["", "piv: an int32 array of n that receives the row interchanges of P A = L U (row i was",
               "interchanged with row piv[i], 0-based, as scipy.linalg.lu_factor returns them);",
               "None: a temporary one. info = i + 1 for the first exactly zero pivot U[i, i]",
               "(like getrf; a later inverse or solve is then not formed)."] if kernel.pivot else []
    syl_doc = ["For the Sylvester solve: info = 1 when A and -B have close eigenvalues (LAPACK",
               "trsyl then solved with perturbed values)."] if any(st.op == "trsyl" for st in kernel.body) else []
    out += _doc(kernel, "    ", [
        "", "Operands are updated in place (matrices Fortran-ordered, vectors 1-D; one dtype of float32,",
        "float64, complex64, complex128: transposes are conjugate transposes for complex data);",
        "they are not checked for NaN or Inf (the SciPy-style function of the module is).",
        "Returns info like LAPACK: 0 on success; k > 0 when the computation stopped at",
        "row k (1-based): the leading minor of order k is not positive definite, or a",
        "zero pivot / zero diagonal element at row k."] + piv_doc + syl_doc)
    out += [f"    return _call(_k_{kernel.name}, _FP, ({args},), _CALL_{kernel.name}, "
            f"{'piv' if kernel.pivot else 'None'}, block_size, _BLOCK_STEPS)", "", ""]
    return "\n".join(out)
