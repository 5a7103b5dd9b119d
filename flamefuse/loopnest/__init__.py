"""Loop nests: exact dependences, Polly-style reductions, fusion conflict graphs, Numba kernels.

Input: a :class:`Program` (:mod:`.ir`) — statements, each its own perfect
loop nest over a rectangular domain with parametric sizes (``n``, ``m-1``),
run in order; subscripts are affine in one loop index (identity, transposed,
shifted, strided).  Build one with :class:`Builder` (:mod:`.builder`)::

    from flamefuse.loopnest import Builder, fuse_program
    b = Builder()
    A = b.array("A", ("n", "m")); p = b.array("p", ("m",)); r = b.array("r", ("n",))
    q = b.matvec(A, p)            # q = A @ p
    s = b.matvec(A.T, r)          # s = A.T @ r
    kernel = fuse_program(b.program(outputs=[q, s]), reorder_float=True)
    out = kernel(A=A_, p=p_, r=r_)        # {"t3": q, "t4": s}: one pass over A
    print(kernel.explain())               # schedule, parallel loops, cuts and why
    print(kernel.source)                  # the generated Numba module

Pipeline, each step a function over frozen dataclasses:

1. :func:`dependences` (:mod:`.deps`): memory-based dependences with
   direction and distance vectors, exact by CP-SAT integer feasibility;
2. :func:`analyse` (:mod:`.reductions`): Polly's reduction-like statements
   (:func:`classify` gives a :class:`Reduction` or a :class:`NotReduction`
   with the reason) and reduction dependences; floating-point ``+``/``*``
   reductions are reordered only with ``reorder_float=True``;
3. :func:`schedule` (:mod:`.fcg`): the fusion conflict graph coloured
   greedily level by level → :class:`Schedule` (a tree of :class:`Loop` /
   :class:`Leaf`, a permutation per statement, the :class:`Cut` s with reasons);
4. :func:`plan` (:mod:`.parallel`): which outermost loops run in parallel and
   which reductions are privatised per thread;
5. :func:`generate` (:mod:`.codegen`) and :func:`fuse_program`
   (:mod:`.compile`): the Numba module (cached under
   ``$FLAMEFUSE_CACHE_DIR`` or ``~/.cache/flamefuse/loopnest``) wrapped as a
   :class:`Kernel`: called with the ``in``/``inout`` arrays and scalars by
   name, it infers the sizes from the shapes, allocates ``out``/``temp``
   arrays and returns ``{name: array}`` for ``out`` and ``inout`` arrays.

:data:`KERNELS` (:mod:`.kernels`) holds BiCG, MVT, GESUMMV, GEMVER and ATAX
with their eager NumPy versions (``flamefuse bench loopnest``;
``flamefuse loopnest NAME`` prints a kernel's schedule and code).

The names below are imported at first use (:func:`__getattr__`): a module that needs only the
builder or a stored kernel (:mod:`flamefuse.runtime.linalg` on a warm run) imports neither
OR-Tools (the dependence tests) nor Numba.
"""
from __future__ import annotations

__all__ = [
    "Access", "Analysis", "ArrayDecl", "Bin", "Bound", "Builder", "Call", "Const", "Cut",
    "Dependence", "Dim", "Index", "KERNELS", "Kernel", "Leaf", "Load", "Loop", "NotReduction",
    "Plan", "Program", "Reduction", "Ref", "Scalar", "Schedule", "Statement", "Store", "Stored",
    "Term", "analyse", "call", "classify", "dependences", "fuse_program", "generate",
    "maximum", "minimum", "plan", "schedule",
]

_FROM = {
    "builder": ("Builder", "Dim", "Ref", "Term", "call", "maximum", "minimum"),
    "codegen": ("generate",),
    "compile": ("Kernel", "fuse_program"),
    "deps": ("Dependence", "dependences"),
    "fcg": ("Cut", "Leaf", "Loop", "Schedule", "schedule"),
    "ir": ("Access", "ArrayDecl", "Bin", "Bound", "Call", "Const", "Index", "Load", "Program",
           "Scalar", "Statement", "Store", "Stored"),
    "kernels": ("KERNELS",),
    "parallel": ("Plan", "plan"),
    "reductions": ("Analysis", "NotReduction", "Reduction", "analyse", "classify"),
}
_MODULE_OF = {name: module for module, names in _FROM.items() for name in names}


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'flamefuse.loopnest' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"flamefuse.loopnest.{module}"), name)
    globals()[name] = value
    return value
