"""The fixed part of every generated module: the source of real modules, copied.

``prelude() -> str`` is the text every generated module holds between its
docstring and its kernels: :mod:`flamefuse.blas_call` (the Python side of a
kernel call, without Numba: checks, work arrays, BLAS threads; a kernel's native
library is called by the same code), :mod:`flamefuse.codegen.numba_blas`
(BLAS/LAPACK from Numba in four precisions, the module's set-up) and
:mod:`flamefuse.codegen.wrappers` (the SciPy-style call), whole, and what they import from flamefuse: the healing Numba cache of
:mod:`flamefuse.numba_cache` (``cached_njit`` and what it uses) with the owner
checks of :mod:`flamefuse.trust` it applies (``folder_problem``,
``file_problem``).  :func:`flamefuse.codegen.embed.bundle` copies them from
their files, so each is written once, as code that is linted and tested.
``names()`` is the set of names it binds (a spec must not be named after one).

A generated module stays standalone (it imports numpy, numba, scipy and the
standard library, never flamefuse), by design:

* ``flamefuse derive SPEC --emit DIR`` writes a module its user keeps, ships and
  loads any way (a package, a plug-in loader, a copy elsewhere): it runs where
  NumPy, Numba and SciPy do, whatever flamefuse version is installed later or
  none.
* Numba's disk cache keys a kernel by its own file only, and a jitted routine it
  calls is compiled into it: were ``_trsm`` imported from flamefuse, a changed
  ``_trsm`` would leave every cached kernel that calls it stale.  In one file,
  the file's stamp covers both.

The copies the generated modules hold are output, like the kernels, checked to
be what :func:`flamefuse.codegen.regenerate_all` writes.
"""
from __future__ import annotations

import functools

from flamefuse.codegen.embed import bundle, top_level_names

PARTS = ("flamefuse.blas_call", "flamefuse.codegen.numba_blas", "flamefuse.codegen.wrappers")


@functools.lru_cache(maxsize=None)
def prelude() -> str:
    return bundle(PARTS)


@functools.lru_cache(maxsize=None)
def names() -> frozenset:
    """The names the prelude binds at the top level of a generated module."""
    return top_level_names(prelude())
