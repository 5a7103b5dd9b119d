"""NumPy's complex multiply in the generated kernels (``cmul128`` / ``cmul64``).

NumPy multiplies complex arrays in its SIMD loop as ``re = fma(ar, br, -(ai * bi))``,
``im = fma(ar, bi, ai * br)`` on CPUs with fused multiply-add (``npyv_muladdsub``), where
Numba's ``a * b`` is ``ar * br - ai * bi``, ``ar * bi + ai * br``: about a quarter of the
products differed in the last bit, and an overflow gave ``nan+infj`` where NumPy gives
``-inf+infj`` (``(1e300+1e300j) ** 2``: the fused ``1e600 - inf`` is ``-inf``, the rounded
``inf - inf`` is NaN). :data:`MODE` is what NumPy's array multiply does here, found once on two
probes whose fused and unfused results differ: ``"fma"``, ``"plain"`` (Numba's own product is
NumPy's), or None (neither: complex multiplies are not fused, :func:`fusable`).

A kernel's complex ``multiply`` / ``square`` / ``x ** 2`` is ``cmul<bits>(a, b)``
(:func:`flamefuse.runtime.kernel.op_expr`); its source then imports the Numba functions
(:func:`import_line`), whose fma is LLVM's (``llvm.fma``: one instruction, or libm's ``fma``).
A kernel run as plain Python (``FLAMEFUSE_JIT=0``) gets :func:`plain_names`: the same formula
with an exactly rounded fma (fractions), its flags raised through NumPy's scalars so that
:func:`flamefuse.runtime.fpflags.collecting` sees them. NumPy's scalar product
(``np.complex128 * np.complex128``) and its ``multiply.reduce`` (``prod``) are not the SIMD
loop: they stay Numba's plain product.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

NAMES = ("cmul128", "cmul64")
IMPORT = "from flamefuse.runtime.npcomplex import cmul128, cmul64"


def _fused(x: float, y: float, z: float) -> float:
    from fractions import Fraction      # (with decimal: 1.3 ms; every fused kernel's source imports this module)
    return float(Fraction(x) * Fraction(y) + Fraction(z))


@lru_cache(maxsize=1)
def mode():
    """``"fma"``, ``"plain"`` or None: how NumPy's complex array multiply rounds here."""
    seen = set()
    rng = np.random.default_rng(7)
    for dt, ft in ((np.complex128, np.float64), (np.complex64, np.float32)):
        for _ in range(200):             # a product whose fused and unfused forms differ
            v = rng.standard_normal(4).astype(ft)
            ar, ai, br, bi = (ft(x) for x in v)
            fused = ft(_fused(float(ar), float(br), -float(ai * bi)))
            plain = ar * br - ai * bi
            if fused != plain:
                break
        else:
            return None
        a = np.full(8, complex(ar, ai), dt)
        b = np.full(8, complex(br, bi), dt)
        got = (a * b)[0]
        seen.add("fma" if got.real == fused else "plain" if got.real == plain else None)
    return seen.pop() if len(seen) == 1 else None


def import_line(lines) -> list:
    """The import a kernel's source needs when one of its ``lines`` calls ``cmul``."""
    return [IMPORT] if any("cmul" in s for s in lines) else []


# -- Numba --------------------------------------------------------------------------------------

def _numba():
    from numba import njit, types
    from numba.extending import intrinsic

    @intrinsic
    def fma(typingctx, x, y, z):
        if not (isinstance(x, types.Float) and x == y == z):
            return None

        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return x(x, y, z), codegen

    @njit(inline="always", error_model="numpy")
    def cmul128(a, b):
        ar, ai, br, bi = a.real, a.imag, b.real, b.imag
        return complex(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br))

    @njit(inline="always", error_model="numpy")
    def cmul64(a, b):
        ar, ai, br, bi = a.real, a.imag, b.real, b.imag
        return np.complex64(complex(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br)))
    return cmul128, cmul64


def __getattr__(name):
    if name in NAMES:
        fns = dict(zip(NAMES, _numba()))
        globals().update(fns)
        return fns[name]
    raise AttributeError(name)


def jit_names() -> dict:
    """The Numba functions, for a kernel text run in a namespace of its own."""
    return dict(zip(NAMES, _numba())) if "cmul128" not in globals() else \
        {n: globals()[n] for n in NAMES}


# -- plain Python ---------------------------------------------------------------------------------

def _fma_plain(x, y, z):
    """fma of NumPy scalars of one float type, exactly rounded (the flags of an overflow or an
    invalid operation raised through NumPy's scalars)."""
    t = type(x)
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y + z                 # an infinity or NaN factor: the same in both forms
    if not math.isfinite(z):
        return z
    from fractions import Fraction
    exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
    try:
        r = t(float(exact))
    except OverflowError:
        r = t(math.inf if exact > 0 else -math.inf)
    if math.isinf(r):
        _ = np.finfo(t).max * t(2)       # the overflow flag (collected), as the fused op raises it
    return r


def _cmul_plain(a, b):
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    return type(a)(complex(_fma_plain(ar, br, -(ai * bi)), _fma_plain(ar, bi, ai * br)))


def plain_names() -> dict:
    return {"cmul128": _cmul_plain, "cmul64": _cmul_plain}
