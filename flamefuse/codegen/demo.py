"""Demo: run the generated SPD-inverse kernel (``python -m flamefuse.codegen.demo [n]``).

Imports ``flamefuse.kernels.spd_inverse`` (``generated/spd_inverse.py``), inverts a random SPD matrix in place
with its DEFAULT kernel, and prints the error against ``numpy.linalg.inv``
and the time (best of 5) against SciPy's LAPACK ``potrf`` + ``potri``.
"""
from __future__ import annotations

import sys

import numpy as np
from scipy.linalg import lapack

from flamefuse.timing import best_of


def scipy_inverse(a):
    c, info = lapack.dpotrf(a, lower=1, overwrite_a=1)
    inv, info2 = lapack.dpotri(c, lower=1, overwrite_c=1)
    return inv, info or info2


def main(argv: list[str] | None = None) -> int:
    n = int((argv if argv is not None else sys.argv[1:] or ["1000"])[0])
    from flamefuse.kernels import spd_inverse as mod
    rng = np.random.default_rng(0)
    m = rng.standard_normal((n, n))
    a = np.asfortranarray(m @ m.T / n + np.eye(n))
    x = a.copy(order="F")
    info = mod.DEFAULT(x)
    if info != 0:
        print(f"{mod.DEFAULT_NAME}: info = {info} (matrix not SPD)")
        return 1
    inv = np.tril(x) + np.tril(x, -1).T
    ref = np.linalg.inv(a)
    err = np.linalg.norm(inv - ref) / np.linalg.norm(ref)
    ours = best_of(mod.DEFAULT, 5, lambda: a.copy(order="F"))
    theirs = best_of(scipy_inverse, 5, lambda: a.copy(order="F"))
    print(f"SPD inverse, n = {n}, kernel {mod.DEFAULT_NAME} (block size {mod.block_size_for(n)})")
    print(f"  relative error vs numpy.linalg.inv: {err:.2e} (cond(A) = {np.linalg.cond(a):.1f})")
    print(f"  time: generated {ours * 1e3:.2f} ms, SciPy potrf+potri {theirs * 1e3:.2f} ms "
          f"(ratio {ours / theirs:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
