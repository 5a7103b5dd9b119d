"""Example: lazy array code around an in-place SPD inverse (item 7 of the runtime issue).

``build_spd`` makes a symmetric, diagonally dominant (so SPD) matrix with
``flamefuse.lazy`` code (recorded and fused); the inverse runs as an
*external operation* (``flamefuse.lazy.external``): pending array work is
flushed, the kernel gets a NumPy view sharing the lazy array's memory and
overwrites it with the inverse; post-processing is lazy again.

``invert_spd_inplace`` is any function ``f(A)`` that overwrites an SPD
``numpy`` matrix with its inverse. The default, :func:`default_inverse`, is
the generated FLAME kernel (``flamefuse.kernels.spd_inverse``'s ``DEFAULT``, wrapped
by :func:`generated_spd_inverse_inplace`) when that module can be imported,
else :func:`scipy_spd_inverse_inplace` (LAPACK potrf + potri through SciPy).

Run: ``python examples/spd_lazy_app.py [n]`` (a checkout or an installed flamefuse).
"""
from __future__ import annotations

import sys

import numpy
from scipy.linalg import lapack

import flamefuse.lazy as np


def scipy_spd_inverse_inplace(A: numpy.ndarray) -> None:
    """Overwrite SPD ``A`` with its inverse (LAPACK dpotrf + dpotri)."""
    c, info = lapack.dpotrf(A, lower=1)
    if info:
        raise numpy.linalg.LinAlgError(f"matrix not positive definite (dpotrf info {info})")
    inv, info = lapack.dpotri(c, lower=1)
    if info:
        raise numpy.linalg.LinAlgError(f"dpotri failed (info {info})")
    A[...] = numpy.tril(inv) + numpy.tril(inv, -1).T


def generated_spd_inverse_inplace(A: numpy.ndarray) -> None:
    """Overwrite SPD ``A`` with its inverse using the generated fused FLAME kernel."""
    from flamefuse.kernels.spd_inverse import DEFAULT
    m = A.T if A.flags.c_contiguous else A   # symmetric: its transpose is the same matrix, column-major
    info = DEFAULT(m)
    if info:
        raise numpy.linalg.LinAlgError(f"matrix not positive definite (info {info})")
    m[...] = numpy.tril(m) + numpy.tril(m, -1).T


def default_inverse():
    """The generated kernel's wrapper if ``flamefuse.kernels.spd_inverse`` imports, else SciPy's."""
    try:
        import flamefuse.kernels.spd_inverse  # noqa: F401
    except ImportError:
        return scipy_spd_inverse_inplace
    return generated_spd_inverse_inplace


def build_spd(n: int):
    i = np.arange(n, dtype=float)
    d = i[:, None] - i[None, :]
    return np.exp(-np.abs(d) / 4.0) + (d == 0) * float(n)


def run(n: int = 200, invert_spd_inplace=None):
    """Build, invert in place, post-process; returns (inverse, symmetric part's Frobenius norm)."""
    invert_spd_inplace = invert_spd_inplace or default_inverse()
    A = build_spd(n)
    np.external(invert_spd_inplace)(A)
    sym = 0.5 * (A + A.T)
    return A, float(np.sqrt(np.sum(sym * sym)))


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 200
    _, norm = run(n)
    print(f"n={n} ||inv(A)||_F = {norm:.12g} (inverse by {default_inverse().__name__})")
    print({k: v for k, v in np.stats().items() if k in ("recorded", "flushes", "blocks", "external")})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
