"""One fused Numba kernel per block: code generation, compilation, caches.

``generate(program, block, gone)`` returns a :class:`Kernel`: the kernel as a value
(:class:`flamefuse.runtime.code.Code`: parameters, chunk count, scratch buffers, the lines of
one chunk and of the combining step, which :mod:`flamefuse.runtime.code` renders as the Numba
module ``kernel(a0, n1, ..., s0, ...)``, ``Kernel.source``, or as a native library's C-ABI
entry) and the arguments it takes (one
:class:`Grid` per base the block touches, scalars as :class:`Scalar`, loop
extents and view offsets as :class:`Index`). A base
is passed whole, as a C-contiguous reshape of its flat buffer
(:func:`flamefuse.runtime.views.grid`), and every view of it becomes affine
subscripts ``a0[n3 + i0, n4 + i1]``. A wrapped view (``np.roll`` read in place,
:mod:`flamefuse.runtime.views`) reads ``a0[w0, i1]`` where
``w0 = i0 + n5; w0 = w0 - n0 if w0 >= n0 else w0`` is computed right inside the loop
over its dimension (hoisted out of inner loops; the shift ``n5`` is an argument, so a
loop over shifts compiles one kernel). Along the innermost dimension the loop is instead
split into segments at each wrap's turn (:func:`_segmented`), inside which
``w1 = i1 + n6 - qw1`` is affine and the loop vectorises (a per-element select halved the
speed of ``np.roll(a, 1, 1) + np.roll(a, -1, 1)``). Offsets, extents and scalars are arguments,
never literals, so the source (and the compiled kernel, cached by source) depends
only on the program's structure, as Bohrium's kernel cache keys kernels: a loop
that updates ``a[k+1:, k:]`` for every ``k`` compiles one kernel, not one per ``k``
(a zero offset stays out of the source). One argument per base however many views
(the heat stencil's five shifted views are one array), unit-stride inner
subscripts that LLVM compiles like a hand-written loop. The kernel is one loop
nest over the block's iteration shape; the outer loop is split into
at most ``SPLIT`` chunks run by ``prange`` (a constant, not the thread count: a kernel's
source and results are the same under any number of threads, so a plan or native library
made under one count is right under another); blocks smaller
than ``PARALLEL_MIN`` elements get a serial kernel (no thread launch). Loop
variables are unsigned (``np.uint64`` bounds), so array subscripts need no
negative-index wrap-around test (with signed ones the Rosenbrock loop runs 1.4x
slower). Bases in ``gone`` (contracted) live in scalar locals; an op with a narrow
integer result (int8 ... int32) is wrapped to that type (:func:`narrowed`), since Numba
computes it in int64 and a local is never narrowed by a store. Full reductions
keep one partial per chunk in a private array combined pairwise after the parallel loop
(no ``prange`` reduction variables at all, so none of Numba's unsupported or
wrong reduction forms arise); an axis reduction puts the reduced axis innermost
and accumulates in a local (a recorded ``A @ x`` of a pending matrix is such a row sum:
:func:`flamefuse.lazy.products.matmul`). A float sum accumulates in blocks combined pairwise
(:mod:`flamefuse.runtime.summation`: as accurate as NumPy's pairwise sum). A float power
``x ** p`` recorded as ``hpow<p>`` (p = +-0.5, +-1.5) is square roots and divisions
(:func:`half_power`), not ``pow``: the n-body interaction ``(d2 + soft) ** -1.5`` is about
twice as fast as through ``pow``. Numba's flags are ``error_model='numpy'`` (no division
checks) and never ``fastmath`` (results stay NumPy's within rounding; the terms of a float
sum's block are added in order, so it does not vectorise).

``compile_kernel(source)`` returns the callable: from memory, else from the
on-disk cache (``$FLAMEFUSE_CACHE_DIR`` or ``~/.cache/flamefuse``, a module per
source hash plus Numba's own ``cache=True`` files), else by writing and
importing it. ``FLAMEFUSE_JIT=0`` runs the same source as plain Python (used
by the fast differential tests). ``COUNTS`` records compiled vs cached.
"""
from __future__ import annotations

import platform
from collections import Counter

import numpy as np

from flamefuse.jit import runtime_threads
from flamefuse.runtime import summation
from flamefuse.runtime.chunks import CHUNKS  # noqa: F401 -- named here too (native libraries' threads)
from flamefuse.runtime.code import Code
from flamefuse.runtime.program import Op, Program, Scalar
from flamefuse.runtime.views import grid, grid_index
from flamefuse.digest import sha256
from flamefuse.values import value

_set = object.__setattr__

# Chunks of a parallel kernel's outer loop: a constant, so that the source, the order of a
# reduction's partial results and the result itself never depend on the number of threads
# (a plan or native library made under one thread count may run under another); enough
# chunks for many threads to share (a thread runs a contiguous run of them).
SPLIT = 256
PARALLEL_MIN = 1 << 14
COUNTS = Counter()
_MEMORY: dict[str, object] = {}

BINARY = {"add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
          "true_divide": "({0} / {1})", "divide": "({0} / {1})", "floor_divide": "({0} // {1})",
          "remainder": "({0} % {1})", "mod": "({0} % {1})", "power": "({0} ** {1})",
          "less": "({0} < {1})", "less_equal": "({0} <= {1})", "greater": "({0} > {1})",
          "greater_equal": "({0} >= {1})", "equal": "({0} == {1})", "not_equal": "({0} != {1})",
          "logical_and": "(({0} != 0) & ({1} != 0))", "logical_or": "(({0} != 0) | ({1} != 0))",
          "logical_xor": "(({0} != 0) != ({1} != 0))", "bitwise_and": "({0} & {1})",
          "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
          "left_shift": "({0} << {1})", "right_shift": "({0} >> {1})"}
BOOL_BINARY = {"add": "({0} | {1})", "multiply": "({0} & {1})", "maximum": "({0} | {1})",
               "minimum": "({0} & {1})", "not_equal": "({0} != {1})"}
UNARY = {"negative": "(-{0})", "positive": "(+{0})", "absolute": "abs({0})", "square": "({0} * {0})",
         "logical_not": "({0} == 0)", "copy": "{0}"}
# ``x ** k`` for a literal k in 2..5 is recorded as ``ipow<k>`` (repeated multiplication), a float
# array's ``x ** p`` for p in +-0.5, +-1.5 as ``hpow<p>`` (square roots: :func:`half_power`)
NP_FUNCS = {"maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign", "logaddexp",
            "sqrt", "exp", "log", "log10", "log2", "expm1", "log1p", "exp2", "cbrt", "sin", "cos",
            "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
            "arctanh", "floor", "ceil", "trunc", "rint", "sign", "isnan", "isinf", "isfinite",
            "reciprocal", "deg2rad", "rad2deg", "fabs"}
# An integer ``//`` or ``%`` by zero is 0 (Numba's ``error_model='numpy'``), and NumPy raises the
# divide-by-zero flag (its warning "divide by zero encountered in floor_divide"); integer
# division raises no flag by itself, so the zero divisor's branch divides a float by a zero:
# :mod:`flamefuse.runtime.fpflags` reads the flag after the kernel, as NumPy does after its loop.
# LLVM may evaluate that float division whatever the branch (no strict floating-point model: it
# is free to speculate, and the native libraries' loops do). The zero was ``(x - 0.5) * 0.0``,
# so the flag was raised for every element: ising's ``(i + j) % 2`` in every flush, each run
# again as NumPy's calls for its warnings. (The integer divisor itself as the float's factor
# is no cure inside that branch: there the compiler knows it is 0 and folds it, so the
# speculated division is by zero again.) Now every element divides, before the integer
# branch, by the integer divisor times ``x - 0.5`` (never zero, at least 0.5 in magnitude,
# finite): zero exactly where the divisor is. Its result's test (``>= 0.0``: always true,
# which the compiler cannot know, a NaN being false) keeps it from being removed. A *scalar*
# divisor is known at the flush, so its
# kernel has no float division at all (``INT_DIVIDE_BY_SCALAR``) and :func:`scalar_divisors`
# names the scalars the flush tests instead (:func:`flamefuse.runtime.execute.run`).
INT_DIVIDES = {"floor_divide": "//", "remainder": "%", "mod": "%"}
INT_DIVIDE = ("((({0} {op} {1}) if {1} != 0 else ({0} - {0})) if "
              "abs(np.float64(1.0) / (np.float64({1}) * (np.float64({0}) - 0.5))) >= 0.0 else {0})")
INT_DIVIDE_BY_SCALAR = "(({0} {op} {1}) if {1} != 0 else ({0} - {0}))"
SUPPORTED = set(BINARY) | set(UNARY) | NP_FUNCS | {"invert", "where"}
REDUCE_IDENTITY = {"sum": "0", "prod": "1", "any": "False", "all": "True"}


@value
class Kernel:
    """A generated kernel: its :class:`~flamefuse.runtime.code.Code` and the arguments it is
    called with (:class:`Grid`, :class:`Index`, :class:`Scalar`, one per parameter). Frozen
    values, as :class:`Grid` and :class:`Index` (:mod:`flamefuse.values`)."""
    code: Code
    args: tuple

    def __init__(self, code, args):
        _set(self, "code", code)
        _set(self, "args", args)

    @property
    def source(self) -> str:
        return self.code.source


@value
class Grid:
    """An array argument: base ``base``'s flat buffer reshaped to ``shape`` (C order)."""
    base: int
    shape: tuple[int, ...]

    def __init__(self, base, shape):
        _set(self, "base", base)
        _set(self, "shape", shape)


@value
class Index:
    """An offset or extent passed to the kernel (as ``np.uint64``) instead of written into its
    source: ``slot`` makes each use its own argument (never merged because values agree)."""
    slot: tuple
    value: int

    def __init__(self, slot, value):
        _set(self, "slot", slot)
        _set(self, "value", value)


def subscript(view, steps, shape, loopvars, const=str) -> str:
    """``o0 + i0, o1 + i1`` addressing ``view`` in the grid ``(steps, shape)``; ``loopvars[j]``
    names the loop variable of view dimension ``j``; ``const(k, c)`` names the non-zero
    constant ``c`` of grid dimension ``k`` (a kernel argument; ``str`` writes the literal).

    Loop variables are unsigned (see :func:`_assemble`), so only non-negative terms
    appear: a negative multiplier is a subtraction (``o1 - i1``), after every addition, so
    no partial sum is below the (in-range) subscript."""
    parts = []
    for k, (c, terms) in enumerate(grid_index(view, steps, shape)):
        expr = (const(k, c) if const is not str else str(c)) if c else ""
        for j, m in sorted(terms, key=lambda t: t[1] < 0):
            t = loopvars[j] if abs(m) == 1 else f"{abs(m)} * {loopvars[j]}"
            expr = (f"{expr} + {t}" if expr else t) if m > 0 else f"{expr or '0'} - {t}"
        parts.append(expr or "0")
    return ", ".join(parts)


def cast(expr: str, src: str, dst: str) -> str:
    if src == dst:
        return expr
    if dst == "bool":
        return f"({expr} != 0)"
    if src.startswith("float") and dst.startswith(("int", "uint")):
        return _float_to_int(expr, dst)
    return f"np.{dst}({expr})"


_X86 = platform.machine().lower() in ("x86_64", "amd64")


def _float_to_int(expr: str, dst: str) -> str:
    """A float cast to an integer type as NumPy's C loops do it where the value does not fit (NaN,
    infinities, out of range; NumPy warns ``invalid value encountered in cast``), not as the
    machine's direct conversion, undefined there (LLVM may saturate a vectorized one):

    * to 8 and 16 bits: through a 32-bit integer, then truncated (``np.int16(np.float32(3e9))``
      is 0, not -32768);
    * on x86-64, to ``uint64``: through ``int64`` below 2**63, else ``int64(x - 2**63)`` with the
      top bit set (``-1.0`` gives 2**64 - 1, NaN 2**63, ``inf`` 0), and to ``uint32`` the same with
      ``int32`` and 2**31: what the compiler's conversion gives NumPy there (for ``uint32``, in
      NumPy's vectorized loop: a short array's, or a long one's last few elements, go through
      ``int64`` instead, NaN 0); elsewhere the machine's conversions are already NumPy's."""
    if dst in ("int8", "int16", "uint8", "uint16"):
        return f"np.{dst}(np.int32({expr}))"
    if _X86 and dst in ("uint32", "uint64"):
        bits = 32 if dst == "uint32" else 64
        top = f"{float(2 ** (bits - 1))!r}"
        return (f"(np.{dst}(np.int{bits}({expr})) if not ({expr} >= {top}) else "
                f"(np.{dst}(np.int{bits}({expr} - {top})) ^ np.{dst}({2 ** (bits - 1)})))")
    return f"np.{dst}({expr})"


def op_expr(op: Op, args: list[str]) -> str:
    name, ins = op.name, op.loop[:-1]
    if name == "where":
        return f"({args[1]} if {args[0]} else {args[2]})"
    if name == "invert":
        return f"(not {args[0]})" if ins[0] == "bool" else f"(~{args[0]})"
    if ins and ins[0] == "bool" and name in BOOL_BINARY:
        return BOOL_BINARY[name].format(*args)
    if name in INT_DIVIDES and ins[0].startswith(("int", "uint")):
        operands = getattr(op, "ins", ())        # (a filter loop's node has none: the trick)
        form = INT_DIVIDE_BY_SCALAR if len(operands) > 1 and type(operands[1]) is Scalar else INT_DIVIDE
        expr = form.format(*args, op=INT_DIVIDES[name])
        if ins[0].startswith("int"):
            expr = f"({_by_minus_one(name, args[0], ins[0])} if {args[1]} == -1 else {expr})"
        return expr
    if name in ("minimum", "maximum") and ins[0].startswith("float"):
        # NumPy's: NaN if either is NaN, else the second operand on a tie (``np.minimum(-0.0,
        # 0.0)`` is 0.0, ``np.minimum(0.0, -0.0)`` is -0.0); Numba's kept the first
        return f"({args[0]} if ({args[0]} {'<' if name == 'minimum' else '>'} {args[1]} or {args[0]} != {args[0]}) else {args[1]})"
    if name in ("left_shift", "right_shift") and ins[0].startswith(("int", "uint")):
        return _shift(name, args[0], args[1], ins[0])
    if name in ("multiply", "square", "ipow2") and ins[0].startswith("complex"):
        from flamefuse.runtime import npcomplex      # NumPy's complex product (its fma)
        if npcomplex.mode() == "fma":
            return f"cmul{ins[0][7:]}({args[0]}, {args[-1]})"
    if name in BINARY:
        return BINARY[name].format(*args)
    if name in UNARY:
        return UNARY[name].format(*args)
    if name.startswith("ipow"):
        return "(" + " * ".join([args[0]] * int(name[4:])) + ")"
    if name.startswith("hpow"):
        return half_power(args[0], float(name[4:]), op.loop[-1])
    return f"np.{name}({', '.join(args)})"


def _shift(name: str, x: str, k: str, dtype: str) -> str:
    """``x << k`` / ``x >> k`` as NumPy gives them for a shift ``k`` outside ``0 .. bits-1``
    (its loops test ``(size_t)k < bits``): 0, and for ``>>`` of a negative ``x`` -1. The machine's
    shift is undefined there (LLVM's is poison; x86 takes ``k`` modulo 64: ``1 << 70`` was 64)."""
    bits = np.dtype(dtype).itemsize * 8
    inside = f"(0 <= {k} and {k} < {bits})"
    if name == "left_shift":
        return f"(({x} << {k}) if {inside} else ({x} - {x}))"
    outside = f"({x} >> {bits - 1})" if dtype.startswith("int") else f"({x} - {x})"
    return f"(({x} >> {k}) if {inside} else {outside})"


def _by_minus_one(name: str, x: str, dtype: str) -> str:
    """``x // -1`` / ``x % -1`` of a signed integer as NumPy gives them: ``-x`` (``MIN // -1``
    wraps to MIN; Numba's int64 division gave 0) and 0, and for ``MIN // -1`` NumPy's overflow
    flag ("overflow encountered in floor_divide"), raised by a float division that overflows
    only when ``x ^ MIN`` is 0 (no integer overflow on the way, also for NumPy's scalars in a
    kernel run as plain Python); the compiler cannot see that its condition always holds, so
    the division stays."""
    if name != "floor_divide":
        return f"({x} - {x})"
    lo = int(np.iinfo(dtype).min)
    gap = f"min(abs(np.float64({x} ^ np.int64({lo}))), 1.0)"
    return f"((-{x}) if np.float64(1e300) / ({gap} * 1e300 + 1e-300) > 0.5 else ({x} - {x}))"


def scalar_divisors(program: Program) -> tuple[int, ...]:
    """The scalars (their numbers) that divide integers in ``program``'s element-wise operations
    over at least one element: its kernels leave the divide-by-zero flag to the flush, which
    raises it where one of them is zero (NumPy's ``x // 0``, ``x % 0`` warn)."""
    return tuple(dict.fromkeys(
        op.ins[1].index for op in program.ops
        if op.name in INT_DIVIDES and op.kind == "ew" and type(op.ins[1]) is Scalar
        and op.loop[0].startswith(("int", "uint")) and 0 not in op.shape))


def half_power(x: str, p: float, dtype: str) -> str:
    """``x ** p`` for p in 0.5, 1.5, -0.5, -1.5 without ``pow`` (a libm call, about twice the time):
    ``sqrt(x)``, ``x * sqrt(x)``, ``1 / sqrt(x + 0)``, ``(1 / x) / sqrt(x)``, each within
    1.5 ulp of ``pow`` (one rounding per operation) with pow's values at +-0 and +-inf: -0 is
    made +0 where it would give -inf, and ``x = -inf`` (NaN through sqrt) is pow's +inf or +0.
    ``0.5`` is NumPy's own ``x ** 0.5`` (its operator calls sqrt). Results that overflow or are
    subnormal may differ from pow's by the last bit of their range."""
    one, root = f"np.{dtype}(1.0)", f"np.sqrt({x})"
    if p == 0.5:
        return root
    expr = {1.5: f"({x} * {root})", -0.5: f"({one} / np.sqrt({x} + np.{dtype}(0.0)))",
            -1.5: f"(({one} / {x}) / {root})"}[p]
    edge = f"np.{dtype}({'np.inf' if p > 0 else '0.0'})"
    return f"({edge} if {x} == -np.inf else {expr})"


def narrowed(op: Op, expr: str) -> str:
    """``expr`` wrapped to the op's integer result type when narrower than 64 bits: Numba
    computes ``int8 * int8`` in int64, and a contracted temporary (never stored into its
    int8 array) would otherwise keep NumPy's overflowed value un-wrapped."""
    dt = op.loop[-1]
    if op.name in ("copy", "where") or dt[:3] not in ("int", "uin") or dt in ("int64", "uint64"):
        return expr
    return f"np.{dt}({expr})"


def _identity(name: str, dtype: str) -> str:
    if name in REDUCE_IDENTITY:
        return cast(REDUCE_IDENTITY[name], "bool" if name in ("any", "all") else "int64", dtype)
    if dtype == "bool":
        return "False" if name == "max" else "True"
    if np.issubdtype(np.dtype(dtype), np.floating):
        return f"np.{dtype}({'-' if name == 'max' else ''}np.inf)"
    info = np.iinfo(np.dtype(dtype))
    return f"np.{dtype}({info.min if name == 'max' else info.max})"


def _combine(name: str, dtype: str, acc: str, v: str) -> str:
    if name == "sum":
        return f"({acc} + {v})" if dtype != "bool" else f"({acc} | {v})"
    if name == "prod":
        return f"({acc} * {v})" if dtype != "bool" else f"({acc} & {v})"
    if name in ("any", "all"):
        return f"({acc} {'|' if name == 'any' else '&'} ({v} != 0))"
    if dtype == "bool":
        return f"({acc} {'|' if name == 'max' else '&'} {v})"
    return f"np.{'maximum' if name == 'max' else 'minimum'}({acc}, {v})"


def _acc_dtype(op: Op) -> str:
    # a float32 sum adds in float64 (more exact than NumPy's pairwise float32 sum); a float32
    # product multiplies in float32 as NumPy's does: its overflow to inf (inf * 0 = nan) is
    # NumPy's result, which a float64 product would hide (1e30 * 1e30 * 0 = 0)
    return op.loop[-1] if op.name in ("max", "min", "prod") or op.loop[-1] != "float32" else "float64"


def generate(program: Program, block, gone) -> Kernel:
    ops = [program.ops[i] for i in sorted(block)]
    shape = ops[0].shape
    nd = len(shape)
    axis = next((op.axis for op in ops if op.kind == "reduce"), None)
    order = list(range(nd)) if axis is None else [d for d in range(nd) if d != axis] + [axis]
    names, args = {}, []

    def arg(x):
        if x not in names:
            names[x] = f"{'s' if isinstance(x, Scalar) else 'n' if isinstance(x, Index) else 'a'}{len(names)}"
            args.append(x)
        return names[x]

    views, grids = {}, {}
    for op in ops:
        for r in (op.out,) + op.refs_in():
            views.setdefault(r.base, set()).add(r.view)
    loopvars = [f"i{d}" for d in range(nd)]
    hoist = {d: [] for d in range(nd)}
    wrapped, segments = {}, []

    def at(ref, dims=loopvars) -> str:
        if ref.base not in grids:
            grids[ref.base] = grid(program.bases[ref.base].size, views[ref.base])
        steps, gshape = grids[ref.base]
        a = arg(Grid(ref.base, gshape))
        if ref.view.wrap:
            dims = wrapped_vars(ref, dims)
        return f"{a}[{subscript(ref.view, steps, gshape, dims, lambda k, c: arg(Index((ref, k), c)))}]"

    def wrapped_vars(ref, dims) -> list:
        if dims is not loopvars:
            raise ValueError("a wrapped view is read only over the iteration space")
        out = list(dims)
        for d, s in enumerate(ref.view.wrap):
            if s:
                out[d] = wrap_var(d, arg(Index((ref, "wrap", d), s)))
        return out

    def wrap_var(d, shift) -> str:
        if (d, shift) not in wrapped:
            w = wrapped[d, shift] = f"w{len(wrapped)}"
            if d == order[-1]:              # innermost: affine in each segment (_segmented)
                hoist[d].append(f"{w} = i{d} + {shift} - q{w}")
                segments.append((w, shift))
            else:
                hoist[d] += [f"{w} = i{d} + {shift}",
                             f"{w} = {w} - {extents[d]} if {w} >= {extents[d]} else {w}"]
        return wrapped[d, shift]

    extents = [arg(Index(("extent", d), n)) for d, n in enumerate(shape)]

    dtype_of = {r: program.bases[r.base].dtype for op in ops for r in (op.out,) + op.refs_in()}
    body, current, tmp = [], {}, [0]

    def fresh():
        tmp[0] += 1
        return f"t{tmp[0]}"

    def load(x):
        if isinstance(x, Scalar):
            return arg(x), x.dtype
        key = x.base if x.base in gone else x
        if key not in current:
            t = fresh()
            body.append(f"{t} = {at(x)}")
            current[key] = t
        return current[key], dtype_of[x]

    pre, pre_chunk, inner_pre, inner_post, post, chunk_post = [], [], [], [], [], []
    sums = {"full": [], "axis": []}          # blocked, pairwise sums (flamefuse.runtime.summation)
    for n, op in enumerate(ops):
        if op.kind == "reduce":
            v, src = load(op.ins[0])
            acc, adt = f"acc{n}", _acc_dtype(op)
            step = f"{acc} = {_combine(op.name, adt, acc, cast(v, src, adt))}"
            body.append(step)
            out_dt = dtype_of[op.out]
            scope = "full" if op.axis is None else "axis"
            if summation.cascaded(op.name, adt):
                sums[scope].append((acc, _identity(op.name, adt), adt))
            if op.axis is None:
                pre.append((f"part{n}", adt, 1))
                pre_chunk.append(f"{acc} = {_identity(op.name, adt)}")
                chunk_post.append(f"part{n}[ch] = {acc}")
                post += summation.pairwise_parts(
                    f"part{n}", "NCH", lambda a, b: _combine(op.name, adt, a, b), "np.uint64")
                post.append(f"{at(op.out, [])} = {cast(f'part{n}[0]', adt, out_dt)}")
            else:
                kept = [f"i{d}" for d in order[:-1]]
                inner_pre.append(f"{acc} = {_identity(op.name, adt)}")
                inner_post.append(f"{at(op.out, kept)} = {cast(acc, adt, out_dt)}")
            continue
        vals = [cast(*load(x), dt) for x, dt in zip(op.ins, op.loop[:-1])]
        t = fresh()
        body.append(f"{t} = {cast(narrowed(op, op_expr(op, vals)), op.loop[-1], dtype_of[op.out])}")
        if op.out.base in gone:
            current[op.out.base] = t
        else:
            body.append(f"{at(op.out)} = {t}")
            current[op.out] = t
    if sums["full"] or sums["axis"]:     # blocks combined pairwise (flamefuse.runtime.summation)
        pre += [(f"{acc}_lv", dt, summation.LEVELS) for acc, _, dt in sums["full"] + sums["axis"]]
        pre_chunk.append(f"slb = {summation.base('ch', 'np.uint64')}")
    if sums["full"]:      # within the chunk (then its partials across chunks)
        pre_chunk += ["fnb = np.uint64(0)", "fpend = np.uint64(0)"]
        chunk_post[:0] = summation.finish(sums["full"], "fnb", "slb", "np.uint64")
    if sums["axis"]:      # within each reduced row
        inner_pre += ["anb = np.uint64(0)", "apend = np.uint64(0)"]
        inner_post[:0] = summation.finish(sums["axis"], "anb", "slb", "np.uint64")
    return Kernel(_assemble(shape, order, axis, names, args, pre, inner_pre,
                            body, inner_post, chunk_post, post, extents, hoist, segments,
                            sums, pre_chunk), tuple(args))


def _segmented(d: int, start: str, stop: str, extent: str, wraps, blocked=False) -> tuple[list, list]:
    """The innermost loop over dimension ``d`` split where a wrapped subscript turns (and,
    when ``blocked``, into blocks of at most ``summation.BLOCK`` iterations): the
    lines opening the ``while`` over segments, and the lines of its body up to the ``for``.
    Inside a segment each wrapped index is ``i + s - q`` with ``q`` (0 or the extent) fixed,
    an affine subscript that LLVM vectorises (a per-element select would not be)."""
    head = [f"c{d} = {start}", f"while c{d} < {stop}:"]
    inner = [f"e{d} = min({stop}, c{d} + np.uint64({summation.BLOCK}))" if blocked else f"e{d} = {stop}"]
    for w, s in wraps:
        inner += [f"if c{d} < {extent} - {s}:", f"    q{w} = np.uint64(0)",
                  f"    e{d} = min(e{d}, {extent} - {s})", "else:", f"    q{w} = {extent}"]
    return head, inner + [f"for i{d} in range(c{d}, e{d}):"]


def _assemble(shape, order, axis, names, args, pre, inner_pre, body, inner_post,
              chunk_post, post, extents, hoist, segments=(), sums=None, pre_chunk=()) -> Code:
    """The kernel's :class:`~flamefuse.runtime.code.Code`. Extents and offsets are ``np.uint64``
    parameters (the code depends on the program's structure only: a loop over ``a[k:, k:]``
    compiles once); the chunking of the outer loop is computed from its extent at run time,
    never from the number of threads (:data:`SPLIT`). ``pre`` are the scratch buffers
    ``(name, dtype, per_chunk)``; ``hoist[d]`` are
    lines placed right inside the loop over dimension ``d`` (wrapped indices); ``segments``,
    the wraps ``(variable, shift)`` of the innermost dimension, split its loop
    (:func:`_segmented`), and so do float sums (``sums``: their accumulators and zeros, per
    scope, ``"full"`` or ``"axis"``), into blocks (:mod:`flamefuse.runtime.summation`);
    ``pre_chunk`` are lines at the start of each chunk."""
    sums = sums or {"full": [], "axis": []}
    blocked = bool(sums["full"] or sums["axis"])
    params = tuple(names[a] for a in args)
    parallel = int(np.prod(shape)) >= PARALLEL_MIN
    if not shape:
        return Code(params, parallel, None, 1, (), tuple(body), ())
    ind = "    "
    lines = list(pre_chunk)
    depth = 0
    closing = []
    for k, d in enumerate(order):
        last = k == len(order) - 1
        if axis is not None and last:
            lines += [ind * depth + s for s in inner_pre]
        start, stop = ("lo", "hi") if k == 0 else ("np.uint64(0)", extents[d])
        loop_depth = depth
        if last and (segments or blocked):
            head, inner = _segmented(d, start, stop, extents[d], segments, blocked)
            lines += [ind * depth + s for s in head] + [ind * (depth + 1) + s for s in inner]
            ends = [s for scope, count, pending in (("full", "fnb", "fpend"), ("axis", "anb", "apend"))
                    for s in summation.block_end(sums[scope], count, pending, f"(e{d} - c{d})",
                                                 "slb", "np.uint64")]
            closing = [ind * (depth + 1) + s for s in ends + [f"c{d} = e{d}"]]
            depth += 2
        else:
            rng = "range(lo, hi)" if k == 0 else f"range({stop})"
            lines.append(ind * depth + f"for i{d} in {rng}:")
            depth += 1
        lines += [ind * depth + s for s in hoist[d]]
    lines += [ind * depth + s for s in body] + closing
    if axis is not None:
        lines += [ind * loop_depth + s for s in inner_post]
    lines += list(chunk_post)
    return Code(params, parallel, extents[order[0]], SPLIT if parallel else 1, tuple(pre),
                tuple(lines), tuple(post))


def jit_enabled() -> bool:
    from flamefuse.switches import on
    return on("FLAMEFUSE_JIT")


def _collecting(fn):
    """A kernel run as plain Python, its NumPy scalars' floating-point errors collected
    (:func:`flamefuse.runtime.fpflags.collecting`) rather than warned per element."""
    from flamefuse.runtime import fpflags

    def kernel(*args):
        with fpflags.collecting():
            return fn(*args)
    return kernel


def compile_kernel(source: str):
    """The kernel function for ``source`` (memory cache, then disk cache, then compile)."""
    key = ("jit:" if jit_enabled() else "py:") + source
    if key in _MEMORY:
        COUNTS["memory_hits"] += 1
        return _MEMORY[key]
    if not jit_enabled():
        from flamefuse.runtime import npcomplex
        namespace = npcomplex.plain_names()
        plain = "\n".join(line for line in source.splitlines()
                          if not line.startswith(("@njit", npcomplex.IMPORT)))
        exec(compile(plain, "<flamefuse kernel>", "exec"), namespace)
        COUNTS["interpreted"] += 1
        _MEMORY[key] = _collecting(namespace["kernel"])
        return _MEMORY[key]
    from flamefuse.cache import load_module     # imports Numba
    runtime_threads()
    digest = sha256(source.encode()).hexdigest()[:24]
    module, cached = load_module("kernels", f"ffk_{digest}", source)
    COUNTS["disk_hits" if cached else "compiled"] += 1
    _MEMORY[key] = module.kernel
    return _MEMORY[key]
