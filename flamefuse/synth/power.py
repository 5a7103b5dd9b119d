"""Chains of products ``X @ P @ P ... @ P`` (``for _ in range(k): Q = Q @ P``) whose
intermediate results nobody sees, run as ``X @ P^k`` with ``P^k`` by repeated squaring:
``floor(log2 k) + popcount(k) - 1`` gemms (plus one for ``X``, none when ``X`` is the identity)
instead of ``k``; markov's eight products from ``np.identity(n)`` are three gemms, not seven.

Reassociating changes rounding, so the chain is taken only when ``X`` and ``P`` are finite and
nonnegative (a transition matrix): then no sum cancels, every association of the product is
accurate entry by entry to ``k n`` units in the last place or so (``|fl(AB) - AB| <= gamma_n
AB``), so the result is NumPy's within rounding; and only when that result is finite (a huge
``P^k`` may overflow where NumPy's ``X @ P @ ...`` does not); otherwise product by product.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from flamefuse.synth import explain
from flamefuse.synth.group import FLOATS
from flamefuse.synth.structure import is_identity


def chains(ops, later) -> dict[int, int]:
    """``{first: last}``: runs of at least three recorded matmuls in which each product's left
    factor is the previous result (whole), read by nothing else and no longer seen by the
    script, and whose right factors are one and the same view."""
    reads = Counter(id(x[0]) for op in ops for x in op.ins)
    runs, i = {}, 0
    while i < len(ops):
        j = i
        while j + 1 < len(ops) and _extends(ops[j], ops[j + 1], ops[i], reads, later):
            j += 1
        if j - i >= 2:
            runs[i] = j
        i = j + 1
    return runs


def _matmul(op) -> bool:
    return op.kind == "linalg" and op.name.op == "matmul"


def _extends(prev, op, first, reads, later) -> bool:
    if not (_matmul(first) and _matmul(op)):
        return False
    base, view = prev.out
    (x, xv), (p, pv) = op.ins
    return (x is base and xv == view and p is first.ins[1][0] and pv == first.ins[1][1]
            and base.live == 0 and id(base) not in later and reads[id(base)] == 1)


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` by one BLAS gemm on the operands' storage, the result Fortran-ordered."""
    return np.matmul(b.T, a.T).T


def gemms(k: int, identity: bool) -> tuple[int, int]:
    """(gemms by squaring, gemms product by product) for ``X @ P^k``."""
    return k.bit_length() - 1 + bin(k).count("1") - 1 + (not identity), k - identity


def _nonnegative_finite(a: np.ndarray) -> bool:
    return bool(a.min() >= 0 and a.max() < np.inf)     # a NaN fails the first test


def power_product(x: np.ndarray, p: np.ndarray, k: int) -> np.ndarray | None:
    """``x @ p^k`` (Fortran-ordered) by squaring, or None where the chain must run product by
    product (see the module doc; also when squaring saves no gemm)."""
    identity = is_identity(x)
    squaring, plain = gemms(k, identity)
    if squaring >= plain or not _nonnegative_finite(p) or not (identity or _nonnegative_finite(x)):
        return None
    n, result, square = k, None, p
    while True:
        if k & 1:
            result = square if result is None else gemm(result, square)
        k >>= 1
        if not k:
            break
        square = gemm(square, square)
    if not identity:
        result = gemm(x, result)
    if not np.isfinite(result).all():
        return None
    explain.add(f"linalg: {n} products X @ P @ ... @ P of nonnegative matrices: P^{n} by squaring, "
                f"{squaring} gemms for {plain} ({p.shape[0]} x {p.shape[1]})")
    return result


def translate(g, i: int, j: int) -> bool:
    """Ops ``i..j`` of group ``g`` (a run of :func:`chains`) as one power product, its result
    put as op ``j``'s; False (nothing done) where they must run one by one."""
    vals = [g.val(x) for x in g.ops[i].ins]
    a, b = (v.arr for v in vals)
    if a.dtype != b.dtype or a.dtype.name not in FLOATS or a.ndim != 2 \
            or b.ndim != 2 or b.shape[0] != b.shape[1] or 0 in a.shape:
        return False
    for v in vals:
        g.ensure_done(v)
    c = power_product(vals[0].value(), vals[1].value(), j - i + 1)
    if c is None:
        return False
    g.put_value(j, c)
    return True
