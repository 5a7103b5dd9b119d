"""Classic fused matrix-vector kernels (PolyBench), as builder programs.

``KERNELS[name]`` is ``(build, eager, inputs)``: ``build()`` returns the
:class:`~flamefuse.loopnest.ir.Program`; ``eager(**inputs)`` is the plain
NumPy/BLAS version returning the same named outputs; ``inputs(n, rng)``
makes square float64 inputs of size ``n``.
"""
from __future__ import annotations

import numpy as np

from flamefuse.loopnest.builder import Builder, Dim


def bicg():
    """q = A p; s = A^T r."""
    b = Builder()
    A, p, r = b.array("A", ("n", "m")), b.array("p", ("m",)), b.array("r", ("n",))
    q = b.matvec(A, p, out=b.array("q", ("n",), role="out"))
    s = b.matvec(A.T, r, out=b.array("s", ("m",), role="out"))
    return b.program(outputs=[q, s])


def mvt():
    """x1 += A y1; x2 += A^T y2 (x1, x2 updated in place)."""
    b = Builder()
    A = b.array("A", ("n", "n"))
    x1, x2 = b.array("x1", ("n",), role="inout"), b.array("x2", ("n",), role="inout")
    y1, y2 = b.array("y1", ("n",)), b.array("y2", ("n",))
    b.matvec(A, y1, out=x1)
    b.matvec(A.T, y2, out=x2)
    return b.program(outputs=[])


def gesummv():
    """y = alpha A x + beta B x."""
    b = Builder()
    A, B, x = b.array("A", ("n", "n")), b.array("B", ("n", "n")), b.array("x", ("n",))
    alpha, beta = b.scalar("alpha"), b.scalar("beta")
    tmp = b.matvec(A, x)
    yb = b.matvec(B, x)
    y = b.axpby(alpha, tmp, beta, yb, out=b.array("y", ("n",), role="out"))
    return b.program(outputs=[y])


def gemver():
    """B = A + u1 v1^T + u2 v2^T; x = beta B^T y + z; w = alpha B x."""
    b = Builder()
    A = b.array("A", ("n", "n"))
    u1, v1, u2, v2, y, z = (b.array(nm, ("n",)) for nm in ("u1", "v1", "u2", "v2", "y", "z"))
    alpha, beta = b.scalar("alpha"), b.scalar("beta")
    i, j = Dim("i"), Dim("j")
    B = b.array("B", ("n", "n"), role="out")
    b.assign(B[i, j], A[i, j] + u1[i] * v1[j] + u2[i] * v2[j])
    x = b.matvec(B.T, y, out=b.array("x", ("n",), role="out"), alpha=beta)
    b.assign(x[i], x[i] + z[i])
    w = b.matvec(B, x, out=b.array("w", ("n",), role="out"), alpha=alpha)
    return b.program(outputs=[B, x, w])


def atax():
    """y = A^T (A x)."""
    b = Builder()
    A, x = b.array("A", ("n", "m")), b.array("x", ("m",))
    tmp = b.matvec(A, x, out=b.array("tmp", ("n",), role="temp"))
    y = b.matvec(A.T, tmp, out=b.array("y", ("m",), role="out"))
    return b.program(outputs=[y])


def _eager_bicg(A, p, r):
    return {"q": A @ p, "s": A.T @ r}


def _eager_mvt(A, x1, x2, y1, y2):
    x1 += A @ y1
    x2 += A.T @ y2
    return {"x1": x1, "x2": x2}


def _eager_gesummv(A, B, x, alpha, beta):
    return {"y": alpha * (A @ x) + beta * (B @ x)}


def _eager_gemver(A, u1, v1, u2, v2, y, z, alpha, beta):
    B = A + np.outer(u1, v1) + np.outer(u2, v2)
    x = beta * (B.T @ y) + z
    return {"B": B, "x": x, "w": alpha * (B @ x)}


def _eager_atax(A, x):
    return {"y": A.T @ (A @ x)}


def _square(*vectors, mats=("A",), scalars=()):
    def make(n, rng):
        out = {m: rng.standard_normal((n, n)) for m in mats}
        out.update({v: rng.standard_normal(n) for v in vectors})
        out.update({s: float(rng.uniform(0.5, 2)) for s in scalars})
        return out
    return make


KERNELS = {
    "bicg": (bicg, _eager_bicg, _square("p", "r")),
    "mvt": (mvt, _eager_mvt, _square("x1", "x2", "y1", "y2")),
    "gesummv": (gesummv, _eager_gesummv, _square("x", mats=("A", "B"), scalars=("alpha", "beta"))),
    "gemver": (gemver, _eager_gemver, _square("u1", "v1", "u2", "v2", "y", "z",
                                               scalars=("alpha", "beta"))),
    "atax": (atax, _eager_atax, _square("x")),
}
