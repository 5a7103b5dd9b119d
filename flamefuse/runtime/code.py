"""A fused run-time kernel as a value, and its two renderings side by side.

:func:`flamefuse.runtime.kernel.generate` returns a :class:`Code` (with the arguments to call
it with): an immutable, hashable value of plain fields, so a plan keeps it on disk as it is
(:meth:`Code.plain`, :meth:`Code.of`) and no consumer ever reads generated text back:

* ``params`` -- the kernel's parameter names, in argument order (``a0`` an array, ``n1`` an
  ``np.uint64`` index or extent, ``s2`` a scalar);
* ``parallel`` -- whether its chunks run in parallel (``prange``; the native library's
  threads);
* ``extent`` -- the parameter holding the extent of the outer loop, which is cut into
  ``NCH = max(1, min(extent, most))`` chunks of ``CH`` iterations (``lo``/``hi`` in a chunk);
  None for a 0-d kernel, whose ``chunk`` lines are its whole body;
* ``most`` -- the most chunks (:data:`flamefuse.runtime.kernel.SPLIT`, or 1 for a serial
  kernel): never the thread count, so results do not depend on it;
* ``buffers`` -- ``(name, dtype, per_chunk)``: scratch arrays of ``NCH * per_chunk`` elements
  (a full reduction's partials, a float sum's levels: :mod:`flamefuse.runtime.summation`);
* ``chunk`` -- the lines of chunk ``ch`` (indented relative to the chunk);
* ``combine`` -- the lines after every chunk has run (partials combined, results stored).

The renderers:

* :func:`njit_module` -- the Numba module ``kernel(<params>)`` (``@njit(parallel=...,
  cache=True, error_model='numpy')``; buffers allocated, ``for ch in prange(NCH)``). Its text,
  :attr:`Code.source`, is the kernel's identity: Numba's and the native libraries' caches are
  keyed by it.
* :func:`native_entry` -- the C-ABI entry ``entry(CLO, CHI, NW, FIN, ...)`` that
  :mod:`flamefuse.runtime.native` compiles as a ``cfunc``: each array a pointer and its extents
  (made a ``carray``; ``sig`` gives the arrays' ranks), the buffers passed by the caller
  (``<name>_p``), the chunks ``range(CLO * NCH // NW, CHI * NCH // NW)`` (workers ``CLO`` to
  ``CHI`` of ``NW``), the combining lines run only when ``FIN``.
"""
from __future__ import annotations

from functools import cached_property

from flamefuse.sigcodes import array_code
from flamefuse.values import value

_set = object.__setattr__

_IND = "    "


@value
class Code:
    """A kernel as a value: its parameters, parallel chunks and lines (see the module doc); a
    frozen value (:mod:`flamefuse.values`)."""
    params: tuple[str, ...]
    parallel: bool
    extent: str | None
    most: int
    buffers: tuple[tuple[str, str, int], ...]
    chunk: tuple[str, ...]
    combine: tuple[str, ...]

    def __init__(self, params, parallel, extent, most, buffers, chunk, combine):
        _set(self, "params", params)
        _set(self, "parallel", parallel)
        _set(self, "extent", extent)
        _set(self, "most", most)
        _set(self, "buffers", buffers)
        _set(self, "chunk", chunk)
        _set(self, "combine", combine)

    @cached_property
    def source(self) -> str:
        """The Numba module's text (:func:`njit_module`), made once per value."""
        return njit_module(self)

    def plain(self) -> tuple:
        """The fields as plain tuples, strings, ints and booleans (what a plan file may hold)."""
        return (self.params, self.parallel, self.extent, self.most, self.buffers, self.chunk, self.combine)

    @classmethod
    def of(cls, plain) -> "Code":
        """The value of :meth:`plain`'s tuple."""
        params, parallel, extent, most, buffers, chunk, combine = plain
        return cls(tuple(params), bool(parallel), extent, int(most),
                   tuple((str(n), str(d), int(p)) for n, d, p in buffers), tuple(chunk), tuple(combine))


def _imports(code: Code) -> list[str]:
    """The import of NumPy's complex product (:mod:`flamefuse.runtime.npcomplex`) when a line
    calls it (no other kernel's text changes)."""
    from flamefuse.runtime.npcomplex import import_line
    return import_line(code.chunk + code.combine)


def _head(code: Code) -> list[str]:
    n0 = code.extent
    return [f"NCH = max(np.uint64(1), min({n0}, np.uint64({code.most})))",
            f"CH = ({n0} + NCH - np.uint64(1)) // NCH"]


def _chunk_bounds(code: Code) -> list[str]:
    return ["lo = np.uint64(ch) * CH", f"hi = min(lo + CH, {code.extent})"]


def _size(per: int) -> str:
    return "NCH" if per == 1 else f"NCH * np.uint64({per})"


def njit_module(code: Code) -> str:
    lines = ["import numpy as np", "from numba import njit, prange"] + _imports(code) + ["",
             f"@njit(parallel={code.parallel}, cache=True, error_model='numpy')",
             f"def kernel({', '.join(code.params)}):"]
    if code.extent is None:
        lines += [_IND + s for s in code.chunk]
        return "\n".join(lines) + "\n"
    lines += [_IND + s for s in _head(code)]
    lines += [_IND + f"{name} = np.empty({_size(per)}, dtype=np.{dt})" for name, dt, per in code.buffers]
    lines += [_IND + "for ch in prange(NCH):"] + [_IND * 2 + s for s in _chunk_bounds(code)]
    lines += [_IND * 2 + s for s in code.chunk] + [_IND + s for s in code.combine]
    return "\n".join(lines) + "\n"


def native_entry(code: Code, sig: tuple) -> str:
    """The C-ABI entry's source for argument types ``sig`` (signature codes, one per param)."""
    names, setup = ["CLO", "CHI", "NW", "FIN"], []
    for p, c in zip(code.params, sig):
        arr = array_code(c)
        if arr is not None:
            dims = [f"{p}_d{d}" for d in range(arr[1])]
            names += [f"{p}_p"] + dims
            setup.append(f"{p} = carray({p}_p, ({', '.join(dims)},))")
        else:
            names.append(p)
    names += [f"{name}_p" for name, _, _ in code.buffers]
    lines = ["import numpy as np", "from numba import carray"] + _imports(code) + ["",
             f"def entry({', '.join(names)}):"]
    lines += [_IND + s for s in setup]
    if code.extent is None:
        lines += [_IND + s for s in code.chunk]
        return "\n".join(lines) + "\n"
    lines += [_IND + s for s in _head(code)]
    lines += [_IND + f"{name} = carray({name}_p, (NCH * np.uint64({per}),))" for name, _, per in code.buffers]
    lines += [_IND + "for ch in range(CLO * NCH // NW, CHI * NCH // NW):"]
    lines += [_IND * 2 + s for s in _chunk_bounds(code) + list(code.chunk)]
    if code.combine:
        lines += [_IND + "if FIN != 0:"] + [_IND * 2 + s for s in code.combine]
    return "\n".join(lines) + "\n"
