"""Matrix-vector, vector-matrix and outer products of a recorded program, fused as one loop nest.

The group's products are :class:`flamefuse.runtime.products.Product` s (a
group whose products share no matrix runs as NumPy calls instead, see that
module). ``loop_program(products)`` turns a group of them into one
:class:`flamefuse.loopnest.Program` (an operand that is a transposed view of
a C-contiguous matrix is declared as that matrix and read through ``.T``, so
``A @ p`` and ``A.T @ r`` read the same array and fuse into one pass over
it; equal extents share a size parameter, so they may share a loop, and the
program depends only on which extents are equal, not on their values);
``run_group(products, buffers)`` runs it on the flat ``buffers`` (filling the outputs'
entries) and returns the :class:`flamefuse.loopnest.Kernel` (``kernel.explain()`` shows the
fusion).

The kernel of a group is made once per process and structure (:func:`kernel_of`): its code
(:class:`flamefuse.loopnest.nestcode.NestCode`, a value) comes from the disk cache of plans
(:mod:`flamefuse.runtime.plan_cache`, keyed by the loop-nest program and the loop-nest
generator's own files), else from the loop nest's analysis (OR-Tools) and code generation
(:func:`flamefuse.loopnest.codegen.nest_code`, ``reorder_float=True``), and is stored there. Its
first call picks how it runs, as a fused run-time kernel's does
(:func:`flamefuse.runtime.execute.run`): the native library built for the code and argument
types (:mod:`flamefuse.runtime.native`), else Numba's kernel, and then the library is wanted
(``flamefuse fuse`` builds it after the script). So a warm run of a script whose product group
was seen before imports neither OR-Tools nor Numba. With ``FLAMEFUSE_COMPILE=background`` (the
default, :mod:`flamefuse.runtime.compiler`) a first call that finds no library wants it built in
the background instead of compiling the Numba kernel, and the group runs as NumPy's calls
meanwhile (``run_group`` returns None).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from flamefuse import sigcodes
from flamefuse.identity import source_text_digest
from flamefuse.loopnest.builder import Builder
from flamefuse.loopnest.compile import Kernel
from flamefuse.loopnest.nestcode import NestCode
from flamefuse.runtime import native, plan_cache, teamcost
from flamefuse.runtime.execute import STATS
from flamefuse.runtime.numpy_program import flagged, ndview, warn_from_numpy, watching
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


class Compiling(Exception):
    """The group's kernel is being compiled in the background (:mod:`flamefuse.runtime.compiler`)."""


def run_group(products: tuple[Product, ...], buffers: list, recorded=None):
    """Run the group as its loop-nest kernel and return it; None when the kernel is being
    compiled in the background: then the products ran as NumPy's calls
    (:func:`flamefuse.runtime.products.run_blas`). NumPy's warnings name each product's line
    (``recorded``: the recorded ops of ``products``, in order)."""
    layout = loop_program(products)
    kernel = kernel_of(layout.program)
    args = {}
    for name, ref in layout.inputs:
        args[name] = ndview(buffers[ref.base], ref)
    from flamefuse.runtime.products import run_blas
    watch, collect = watching()
    try:
        with collect:
            result = kernel(**args)
    except Compiling:
        from flamefuse.runtime import compiler
        compiler.STATS["deferred_groups"] += 1
        run_blas(products, buffers, recorded)
        return None
    for (name, ref), p in zip(layout.outputs, products):
        buffers[ref.base] = np.ascontiguousarray(result[name], dtype=p.dtype).reshape(-1)
    if flagged(watch, True):    # NumPy's calls again (the outputs are fresh): its values, warnings
        warn_from_numpy(lambda mark: run_blas(products, buffers, recorded, mark), recorded)
    return kernel


_KERNELS: dict = {}


@lru_cache(maxsize=1)
def _generator_key() -> str:
    """The disk key's "partitioner": the loop-nest generator's files (a change reads no old code)."""
    return "loopnest:" + source_text_digest(("loopnest",))


def kernel_of(program) -> Kernel:
    """The product group's kernel: from memory, else its code from disk, else generated."""
    kernel = _KERNELS.get(program)
    if kernel is not None:
        return kernel
    record = plan_cache.load(program, _generator_key())
    code = None
    if record is not None:
        try:
            code = NestCode.of(record)
            STATS["loopnest_loads"] += 1
        except (TypeError, ValueError):
            code = None
    if code is None:            # analysed and generated (OR-Tools); compiled only if no library
        from flamefuse.loopnest.codegen import nest_code
        from flamefuse.loopnest.compile import analysed
        code = nest_code(*analysed(program, True))
        plan_cache.store(program, _generator_key(), code.plain())
    kernel = _KERNELS[program] = Kernel(program, True, code, _Launch(code))
    return kernel


class _Launch:
    """Calls a loop-nest kernel: at the first call, the native library of its code for these
    argument types, else Numba's kernel (then the library is wanted). Both cut a parallel root
    into the same shares (:data:`flamefuse.loopnest.nestcode.SHARES`), so they give the same
    bits under any thread count."""

    def __init__(self, code: NestCode):
        self.code, self.fn, self.native = code, None, True

    def __call__(self, *args):
        if self.fn is None:
            sig = sigcodes.signature(args)
            self.fn = native.find(self.code.source, sig) if sig is not None else None
            if self.fn is None and sig is not None and native.enabled():
                from flamefuse.runtime import compiler
                if compiler.background():
                    fn = compiler.library(self.code, sig)
                    if fn is None:
                        raise Compiling(self.code.source)
                    if fn is not compiler.INLINE:
                        self.fn = fn
            if self.fn is None:
                from flamefuse.loopnest.compile import _load
                self.fn, self.native = _load(self.code.source), False
                native.want(self.code, sig)
            else:
                STATS["native_loads"] += 1
                if getattr(self.fn, "serial", self.fn) is not self.fn and teamcost.nest_serial(args):
                    self.fn = self.fn.serial        # too small to pay for waking the thread team
                    STATS["serial_launches"] += 1
        self.fn(*args)
