"""Matrix-vector, vector-matrix and outer products of a recorded program, fused as one loop nest.

The group's products are :class:`flamefuse.runtime.products.Product` s (a
group whose products share no matrix runs as NumPy calls instead, see that
module). ``loop_program(products)`` turns a group of them into one
:class:`flamefuse.loopnest.Program` (an operand that is a transposed view of
a C-contiguous matrix is declared as that matrix and read through ``.T``, so
``A @ p`` and ``A.T @ r`` read the same array and fuse into one pass over
it; equal extents share a size parameter, so they may share a loop, and the
program depends only on which extents are equal, not on their values);
``run_group(products, buffers)`` compiles it with
:func:`flamefuse.loopnest.fuse_program` (``reorder_float=True``; memoised),
runs it on the flat ``buffers`` (filling the outputs' entries) and returns the
:class:`flamefuse.loopnest.Kernel` (``kernel.explain()`` shows the fusion).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from flamefuse.loopnest import Builder, fuse_program
from flamefuse.runtime.execute import ndview
from flamefuse.runtime.products import Product
from flamefuse.runtime.program import Ref
from flamefuse.runtime.views import View


def _transposed(ref: Ref) -> bool:
    """Is this 2-D view the transpose of a C-contiguous matrix (and not itself C-contiguous)?"""
    v = ref.view
    if len(v.shape) != 2:
        return False
    (n, m), (s0, s1) = v.shape, v.strides
    c_contig = (n == 1 or s0 == m) and (m == 1 or s1 == 1)
    return not c_contig and (n == 1 or s0 == 1) and (m == 1 or s1 == n)


@dataclass(frozen=True)
class Layout:
    """The loop-nest program of a group and how to bind its arrays to buffers."""
    program: object
    inputs: tuple   # (array name, Ref of the array as declared)
    outputs: tuple  # (array name, Ref)


@lru_cache(maxsize=512)
def loop_program(products: tuple[Product, ...]) -> Layout:
    b = Builder()
    refs, inputs, outputs, sizes = {}, [], [], {}

    def operand(ref: Ref, dtype: str):
        flip = _transposed(ref)
        v = ref.view
        key = Ref(ref.base, View(v.offset, v.shape[::-1], v.strides[::-1])) if flip else ref
        if key not in refs:
            name = f"a{len(inputs)}"
            shape = tuple(sizes.setdefault(k, f"n{len(sizes)}") for k in key.view.shape)
            refs[key] = b.array(name, shape, dtype=dtype)
            inputs.append((name, key))
        return refs[key].T if flip else refs[key]

    for p in products:
        x, y = (operand(r, p.dtype) for r in p.ins)
        out = {"matvec": b.matvec, "vecmat": b.vecmat, "outer": b.outer}[p.name](x, y)
        refs[p.out] = out
        outputs.append((out.name, p.out))
    program = b.program(outputs=[refs[p.out] for p in products])
    return Layout(program, tuple(inputs), tuple(outputs))


def run_group(products: tuple[Product, ...], buffers: list):
    layout = loop_program(products)
    kernel = fuse_program(layout.program, reorder_float=True)
    args = {}
    for name, ref in layout.inputs:
        args[name] = ndview(buffers[ref.base], ref)
    result = kernel(**args)
    for (name, ref), p in zip(layout.outputs, products):
        buffers[ref.base] = np.ascontiguousarray(result[name], dtype=p.dtype).reshape(-1)
    return kernel
