"""Library operations run one LAPACK call each: for a call whose own chain derives no kernel.

``run_steps(seg, calls)`` runs the steps of ``calls`` (a slice of
``seg.calls``) on the chain's buffers in place with SciPy's LAPACK wrappers:
chol (potrf), trinv (trtri, into R when bound), ltl (lauum), trsm / trsm_lt
(trtrs). It runs a piece that fuses nothing where LAPACK's routine is the
faster one (a lone ``chol``, a lone solve with one right-hand side:
:func:`flamefuse.synth.group.lapack_alone`), and a call whose chain no kernel
derives for; any other operation there raises ``NotImplementedError`` naming it.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack


def _info(name, info, spd=False):
    if info > 0:            # also the messages of a kernel's failure (flamefuse.synth.group._run)
        raise np.linalg.LinAlgError(library_message(name, info, spd))


_SCIPY_INV: list = []


def library_message(name: str, info: int, spd: bool = False) -> str:
    """The message NumPy's or SciPy's own ``name`` (``"numpy.linalg.inv"``) gives when its
    factorisation fails at row ``info`` (1-based; ``spd``: a Cholesky's leading minor), so a
    script that prints or compares ``str(err)`` sees the library's text: NumPy's
    ``Singular matrix`` / ``Matrix is not positive definite``, SciPy's
    ``<info>-th leading minor of the array is not positive definite`` and
    ``singular matrix: resolution failed at diagonal <info - 1>``; ``scipy.linalg.inv``'s text
    (it changed between SciPy versions) is the installed SciPy's own, asked once of a 1x1 zero
    matrix. Another name keeps a message naming it and the row."""
    if name.startswith("numpy.linalg."):
        return "Matrix is not positive definite" if spd else "Singular matrix"
    if spd and name in ("scipy.linalg.cholesky", "scipy.linalg.cho_factor"):
        return f"{info}-th leading minor of the array is not positive definite"
    if name == "scipy.linalg.solve_triangular":
        return f"singular matrix: resolution failed at diagonal {info - 1}"
    if name == "scipy.linalg.inv" and not spd:
        if not _SCIPY_INV:
            from scipy.linalg import inv
            try:
                inv(np.zeros((1, 1)))
                _SCIPY_INV.append("singular matrix")
            except np.linalg.LinAlgError as err:
                _SCIPY_INV.append(str(err))
        return _SCIPY_INV[0]
    return f"{name}: " + (f"Matrix is not positive definite (the leading minor of order {info})" if spd
                          else f"Singular matrix (zero pivot or diagonal element at row {info})")


def _put(dest, value) -> None:
    """``dest[...] = value`` unless LAPACK already wrote the result in place (overwrite_*)."""
    if value is not dest:
        dest[...] = value


def run_steps(seg, calls) -> None:
    for call, first, count, finish in calls:
        if finish:
            raise NotImplementedError(f"{call.name}: no kernel derives for its chain and it has no "
                                      "LAPACK fallback here")
        for step in seg.steps[first:first + count]:
            b = dict(step.binds)
            arr = {k: seg.buffers[v] for k, v in b.items()}
            kind = lapack.get_lapack_funcs
            if step.op == "chol":
                a = arr["A"]
                c, info = kind(("potrf",), (a,))[0](a, lower=1, overwrite_a=1, clean=0)
                _info(call.name, info, spd=True)
                _put(a, c)
            elif step.op == "trinv":
                a = arr.get("R", arr["L"])
                if "R" in arr:
                    a[...] = arr["L"]
                c, info = kind(("trtri",), (a,))[0](a, lower=1, overwrite_c=1)
                _info(call.name, info)
                a[...] = c
            elif step.op == "ltl":
                a = arr["L"]
                c, info = kind(("lauum",), (a,))[0](a, lower=1, overwrite_c=1)
                a[...] = c
            elif step.op in ("trsm", "trsm_lt"):
                x, info = kind(("trtrs",), (arr["L"],))[0](arr["L"], arr["B"], lower=1, overwrite_b=1,
                                                          trans=1 if step.op == "trsm_lt" else 0)
                _info(call.name, info)
                _put(arr["B"], x)
            else:
                raise NotImplementedError(f"{call.name}: no kernel derives for {step.op} and it has no "
                                          "LAPACK fallback here")
