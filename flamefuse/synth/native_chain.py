"""A synthesized chain kernel kept as a native library, so a warm run imports no Numba.

A chain's kernel is the ``_k_<variant>`` of its generated module (kept in the cache folder
``synth``: :mod:`flamefuse.synth.kernels`), called by the variant's wrapper through ``_call`` of
:mod:`flamefuse.blas_call` (checks, block size, pivots, work arrays, BLAS threads). The kernel
allocates nothing and reaches BLAS/LAPACK only through the routine table it is given (an int64
array of SciPy's Cython function addresses), so nothing process-specific is compiled into it and
it is built as a native library like every fused kernel (:mod:`flamefuse.runtime.native`: the
same build, trust checks, store entries and ``.none`` markers):

* :class:`ChainCode` ``(name, kernel, text)`` is the value that names it: the synth module's
  cache name, its DEFAULT variant and the module's text (its :attr:`~ChainCode.source`, what
  the library is keyed by, is the variant and the text). :meth:`~ChainCode.plain` is the name
  and variant only: a background job never carries code; the worker reads the module from the
  user's own cache (:meth:`ChainCode.of`).
* :meth:`ChainCode.native_form` gives :func:`flamefuse.runtime.native.build` the C-ABI entry
  ``entry(<each array: pointer, extents>, nb, fp, iw, dw, rw, cw, ws, ws_size, out)``: each array
  a ``carray`` of the type the Numba path passes (a matrix transposed, C-contiguous), the
  kernel's info written to ``out[0]``; it calls the module's own ``_k_<variant>`` dispatcher
  (compiled with its own flags: the same machine code as the Numba path, so the same bits). The
  error path Numba keeps for its callees is never taken (no routine raises) but links against
  Numba's helpers: stubs (:data:`RAISE_STUBS`) stand for them, and should it ever run, ``out``
  keeps its sentinel and the launcher raises ``RuntimeError`` (never a wrong result). A kernel
  that needs anything else outside the library (``_triacc`` allocates) is not built.
* :func:`load` is the launcher of a built library (registered with
  :data:`flamefuse.runtime.native.LOADERS` as ``chain``): the routine table is read from SciPy's
  capsules with ``ctypes`` (``scipy.linalg.cython_blas`` / ``cython_lapack``'s ``__pyx_capi__``:
  the addresses Numba's ``get_cython_function_address`` gives ``_FP``), the variant's table and
  block sizes from the library's layout, and the call goes through the same ``_call``.
* :class:`Launch` is a chain's kernel (:attr:`flamefuse.synth.kernels.Fused.kernel`): per
  argument types (:func:`signature`), the library when one was built, else the module's Numba
  wrapper (the module imported then), and the library is wanted (``flamefuse fuse`` builds it
  after the script, or the background compiler does).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from flamefuse.runtime import native
from flamefuse.sigcodes import array_code, code_of_array

MISSING = -(2 ** 62)        # ``out[0]`` before the call: still there, the kernel did not finish
RAISE_STUBS = native.raise_stubs("linear-algebra kernel")
RAISE_STUBBED = native.RAISE_STUBBED


@dataclass(frozen=True)
class ChainCode:
    name: str                           # the synth module's cache name
    kernel: str                         # its DEFAULT variant
    text: str = field(repr=False)       # the module's text

    @property
    def source(self) -> str:
        """What the library is keyed by: the variant and the module's text."""
        return f"{self.kernel}\n{self.text}"

    def plain(self) -> tuple:
        return (self.name, self.kernel)

    @classmethod
    def of(cls, plain) -> "ChainCode":
        """The value of :meth:`plain`'s pair, its text read from the user's cache (ValueError when
        it is not there)."""
        from flamefuse.cache import cached_source
        name, kernel = (str(x) for x in plain)
        text = cached_source("synth", name)
        if text is None or f"\ndef _k_{kernel}(" not in text:
            raise ValueError(f"no module {name} with a kernel {kernel} in the cache")
        return cls(name, kernel, text)

    def native_form(self, sig: tuple):
        """``(entry source, entry parameter types, layout, cfunc flags, namespace, stub text,
        stubbed names)`` for :func:`flamefuse.runtime.native.build`."""
        from numba import carray, from_dtype, types
        from flamefuse.cache import load_module
        module, _ = load_module("synth", self.name, self.text)
        dtype = np.dtype(array_code(sig[0])[0])
        real = np.dtype(dtype.char.lower())
        names, argtypes, pass_ = [], [], []
        for k, code in enumerate(sig):
            dt, nd, _ = array_code(code)
            dims = [f"a{k}_d{d}" for d in range(nd)]
            names += [f"a{k}_p"] + dims
            argtypes += [types.CPointer(from_dtype(np.dtype(dt)))] + [types.int64] * nd
            pass_.append(f"carray(a{k}_p, ({', '.join(dims)},))")
        names += ["nb", "fp_p", "iw_p", "dw_p", "rw_p", "cw_p", "ws_p", "ws_d0", "out_p"]
        argtypes += [types.int64, types.CPointer(types.int64), types.CPointer(types.int32),
                     types.CPointer(from_dtype(dtype)), types.CPointer(from_dtype(real)),
                     types.CPointer(types.uint8), types.CPointer(from_dtype(dtype)), types.int64,
                     types.CPointer(types.int64)]
        pass_ += ["nb", "carray(fp_p, (11,))", "carray(iw_p, (8,))", "carray(dw_p, (2,))",
                  "carray(rw_p, (2,))", "carray(cw_p, (4,))", "carray(ws_p, (ws_d0,))"]
        text = "\n".join([f"def entry({', '.join(names)}):", "    out = carray(out_p, (1,))",
                          f"    out[0] = _k_{self.kernel}({', '.join(pass_)})"]) + "\n"
        table = getattr(module, f"_CALL_{self.kernel}")
        layout = json.dumps({"chain": [table, module._BLOCK_STEPS, len(module._ROUTINES)]})
        namespace = dict(vars(module), carray=carray)
        return text, argtypes, layout, {}, namespace, RAISE_STUBS, RAISE_STUBBED


def signature(args, piv) -> tuple | None:
    """The argument types of a chain kernel's call: each operand's code (dtype, rank,
    writeable: :mod:`flamefuse.sigcodes`; complex too), then the pivots' when given; None when
    an operand is not a native-order array of a LAPACK precision (the Numba path checks it)."""
    out = []
    for a in args if piv is None else (*args, piv):
        if type(a) is not np.ndarray or not a.dtype.isnative:
            return None
        out.append(code_of_array(a.dtype, a.ndim, a.flags.writeable))
    if array_code(out[0])[0][1:] not in ("f4", "f8", "c8", "c16"):
        return None
    return tuple(out)


_TABLES: dict = {}          # dtype.char -> the routine table read from SciPy's capsules


def routine_table(char: str) -> np.ndarray:
    """The routine table of precision ``char`` (``_ROUTINES``' order of
    :mod:`flamefuse.blas_call`): the addresses in SciPy's Cython capsules, read with ``ctypes``."""
    table = _TABLES.get(char)
    if table is None:
        import ctypes
        import importlib
        from flamefuse.blas_call import _routines
        get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
        get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
            ("PyCapsule_GetPointer", ctypes.pythonapi))
        out = []
        for module, symbol in _routines(char):
            capsule = importlib.import_module(module).__pyx_capi__[symbol]
            out.append(get_pointer(capsule, get_name(capsule)))
        table = _TABLES[char] = np.array(out, dtype=np.int64)
    return table


def load(lib, fn, path, sig: tuple, text: str):
    """The launcher of a built chain library: ``launch(*operands, piv=None, block_size=None)``,
    the variant's wrapper's arguments and its info."""
    import ctypes
    from flamefuse.blas_call import _ROUTINES, _call
    table, steps, routines = json.loads(text)["chain"]
    if routines != len(_ROUTINES):
        raise ValueError(f"{path} was built for another routine table")
    checks, classes, size, pivot = table
    table = (tuple(tuple(c) for c in checks), None if classes is None else tuple(tuple(c) for c in classes),
             tuple(size), bool(pivot))
    steps = tuple(tuple(s) for s in steps)
    char = np.dtype(array_code(sig[0])[0]).char
    fp = {char: routine_table(char)}
    argtypes = []
    for code in sig:
        argtypes += [ctypes.c_void_p] + [ctypes.c_int64] * array_code(code)[1]
    fn.argtypes = argtypes + [ctypes.c_int64] + [ctypes.c_void_p] * 6 + [ctypes.c_int64, ctypes.c_void_p]
    arrays = len(sig)

    def kernel(*args):
        flat = []
        for a in args[:arrays]:
            flat.append(a.ctypes.data)
            flat.extend(a.shape)
        nb, table_, iw, dw, rw, cw, ws = args[arrays:]
        out = np.array([MISSING], np.int64)
        fn(*flat, nb, table_.ctypes.data, iw.ctypes.data, dw.ctypes.data, rw.ctypes.data, cw.ctypes.data,
           ws.ctypes.data, ws.size, out.ctypes.data)
        if out[0] == MISSING:
            raise RuntimeError(f"flamefuse: the native linear-algebra kernel {path.name} did not finish")
        return out[0]

    def launch(*operands, piv=None, block_size=None):
        return _call(kernel, fp, operands, table, piv, block_size, steps)

    launch.library = lib
    return launch


native.LOADERS["chain"] = load


class Launch:
    """A chain's kernel: the variant's wrapper's arguments (``*operands, piv=None``) and its info;
    per argument types, the native library if built, else the module's Numba wrapper (then the
    library is wanted)."""

    def __init__(self, code: ChainCode, module=None):
        self.code, self.module, self.fns = code, module, {}

    def imported(self):
        """The kernel's module, imported now (with Numba) if it was not."""
        if self.module is None:
            from flamefuse.cache import load_module
            self.module = load_module("synth", self.code.name, self.code.text)[0]
        return self.module

    def __call__(self, *operands, piv=None):
        sig = signature(operands, piv)
        fn = self.fns.get(sig)
        if fn is None:
            fn = native.find(self.code.source, sig) if sig is not None else None
            if fn is None:
                fn = self.imported().VARIANTS[self.code.kernel]
                native.want(self.code, sig)
            else:
                from flamefuse.runtime.execute import STATS
                STATS["native_loads"] += 1
            self.fns[sig] = fn
        return fn(*operands, piv=piv) if piv is not None else fn(*operands)
