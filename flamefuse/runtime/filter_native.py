"""Filter loops (:mod:`flamefuse.runtime.filter_kernel`) as native libraries, so a warm run of a
script with boolean masks imports no Numba (#29).

A filter loop's kernel is the Numba module text ``Loop.source`` (``kernel(n, a0, ...)``
returning ``(n, c_G...)``). :class:`FilterCode` is that text as a kernel value for
:mod:`flamefuse.runtime.native`'s one build, trust and load path; it renders itself
(``native_form``, the interface of kinds defined outside :mod:`flamefuse.runtime.code`):

* the kernel's function, with ``prange`` read as ``range`` and ``parallel=False``: a parallel
  loop's chunks are a constant number (:data:`flamefuse.runtime.kernel.SPLIT`), each with its own
  accumulators combined pairwise after the loop, so running them in order gives the same bits;
  each array it allocates (a parallel loop's partials, a float sum's levels: the only
  ``np.empty(...)`` lines at the top of its body) becomes the caller's buffer of
  :func:`bound` elements, sliced to the size the line asked for; a source with another
  allocation has no native form (not built, it stays with Numba);
* the C-ABI entry ``entry(n, <each argument: an array's pointer and extents, a scalar>,
  <each buffer's pointer>, ret)`` calls it and writes the returned counts into ``ret``;
* the layout (JSON) ``{"filter": [returned values, [[dtype, elements], ...]]}``, read by
  :func:`load` (registered as the loader of the kind ``filter``), whose launcher takes the
  kernel's own arguments and returns its tuple.

:meth:`FilterCode.plain` is the kernel module's cache name (``ffk_<digest>``, which
:func:`flamefuse.runtime.kernel.compile_kernel` wrote when the script compiled it through Numba);
:meth:`FilterCode.of` reads the text back from the user's own cache (like a chain's module:
a background job holds names, never code).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np

from flamefuse.digest import sha256
from flamefuse.runtime import native
from flamefuse.runtime.kernel import SPLIT
from flamefuse.runtime.summation import LEVELS
from flamefuse.sigcodes import array_code

MISSING = -(2 ** 62)        # ``ret[0]`` before the call: still there, the kernel did not finish
# Numba's exception path, which an entry that calls a kernel has even where no value can raise:
# never taken by these loops' arithmetic; if it were, the launcher sees MISSING and the caller
# runs Numba's kernel instead (the loop writes only its own fresh buffers: it may run again).
RAISE_STUBS = """
extern void PyErr_SetString(void *, const char *);
extern void *PyExc_RuntimeError;
void *numba_unpickle(const char *d, int n, const char *h) { (void)d; (void)n; (void)h; return 0; }
void *numba_runtime_build_excinfo_struct(void *a, void *b) { (void)a; (void)b; return 0; }
void NRT_Free(void *p) { (void)p; }
int numba_do_raise(void *e) { (void)e;
    PyErr_SetString(PyExc_RuntimeError, "flamefuse: a native filter loop raised"); return 0; }
"""
RAISE_STUBBED = frozenset({"numba_unpickle", "numba_runtime_build_excinfo_struct", "NRT_Free", "numba_do_raise"})
_ALLOC = re.compile(r"^    (\w+) = np\.empty\((.*), dtype=np\.(\w+)\)$")


def bound() -> int:
    """Elements of every buffer: the most chunks times the levels of a sum (a partials array
    needs at most :data:`SPLIT`, a levels array ``chunks * LEVELS``)."""
    return SPLIT * LEVELS


def module_name(source: str) -> str:
    """The kernel module's cache name (as :func:`flamefuse.runtime.kernel.compile_kernel` names it)."""
    return f"ffk_{sha256(source.encode()).hexdigest()[:24]}"


@dataclass(frozen=True)
class FilterCode:
    source: str         # the filter loop's Numba module text

    def plain(self) -> tuple:
        return (module_name(self.source),)

    @classmethod
    def of(cls, plain) -> "FilterCode":
        """The value named by :meth:`plain`, its text read from the user's cache (ValueError when
        it is not there or is not that kernel)."""
        from flamefuse.cache import cached_source
        (name,) = (str(x) for x in plain)
        text = cached_source("kernels", name)
        if text is None or module_name(text) != name or "\ndef kernel(n" not in text:
            raise ValueError(f"no filter kernel module {name} in the cache")
        return cls(text)

    def serial(self) -> tuple[str, list]:
        """``(text, buffers)``: the kernel's function, serial, its allocations read from
        parameters ``_b0, _b1...`` (``buffers``: their dtypes). ValueError when the source is
        not of the expected form."""
        lines = self.source.splitlines()
        head = [k for k, s in enumerate(lines) if s.startswith("def kernel(")]
        if len(head) != 1 or not lines[head[0] - 1].startswith("@njit("):
            raise ValueError("not a filter kernel")
        body, buffers = [], []
        for s in lines[head[0] + 1:]:
            m = _ALLOC.match(s)
            if m:
                body.append(f"    {m.group(1)} = _b{len(buffers)}[:{m.group(2)}]")
                buffers.append(m.group(3))
            else:
                body.append(s.replace("prange(", "range("))
        text = "\n".join(body)
        if "np.empty" in text or "np.zeros" in text or "np.full" in text or "np.ones" in text:
            raise ValueError("the kernel allocates arrays: no native form")
        params = lines[head[0]][len("def kernel("):-2]
        extra = "".join(f", _b{j}" for j in range(len(buffers)))
        return f"def kernel({params}{extra}):\n{text}\n", buffers

    def native_form(self, sig: tuple):
        """``(entry source, entry parameter types, layout, cfunc flags, namespace, stub text,
        stubbed names)`` for :func:`flamefuse.runtime.native.build`."""
        from numba import carray, from_dtype, njit, types
        kernel_text, buffers = self.serial()
        returned = self.source.count("return (n, ") and self.source.split("return (n, ")[-1].count(",") + 1
        if not returned:
            raise ValueError("not a filter kernel")
        namespace = {"np": np, "carray": carray}
        exec(compile(kernel_text, "<flamefuse filter kernel>", "exec"), namespace)
        namespace["kernel"] = njit(error_model="numpy")(namespace["kernel"])
        names, argtypes, pass_ = [], [], []
        for k, code in enumerate(sig):
            arr = array_code(code)
            if arr is None:
                names.append(f"x{k}")
                argtypes.append(from_dtype(np.dtype(code)))
                pass_.append(f"x{k}")
                continue
            dt, nd, _ = arr
            dims = [f"x{k}_d{d}" for d in range(nd)]
            names += [f"x{k}_p"] + dims
            argtypes += [types.CPointer(from_dtype(np.dtype(dt)))] + [types.int64] * nd
            pass_.append(f"carray(x{k}_p, ({', '.join(dims)},))")
        for j, dt in enumerate(buffers):
            names.append(f"b{j}_p")
            argtypes.append(types.CPointer(from_dtype(np.dtype(dt))))
            pass_.append(f"carray(b{j}_p, ({bound()},))")
        names.append("ret_p")
        argtypes.append(types.CPointer(types.int64))
        text = "\n".join([f"def entry({', '.join(names)}):",
                          f"    ret = carray(ret_p, ({returned},))",
                          f"    r = kernel({', '.join(pass_)})"]
                         + [f"    ret[{j}] = r[{j}]" for j in range(returned)]) + "\n"
        layout = json.dumps({"filter": [returned, [[dt, bound()] for dt in buffers]]})
        return text, argtypes, layout, {}, namespace, RAISE_STUBS, RAISE_STUBBED


def load(lib, fn, path, sig: tuple, text: str):
    """The launcher of a filter loop's library: the kernel's arguments, its returned tuple (None
    when the kernel did not finish: the caller runs Numba's)."""
    import ctypes
    returned, buffers = json.loads(text)["filter"]
    argtypes, params, flat = [], [], []
    for k, code in enumerate(sig):
        params.append(f"x{k}")
        arr = array_code(code)
        if arr is not None:
            argtypes += [ctypes.c_void_p] + [ctypes.c_int64] * arr[1]
            flat += [f"x{k}.ctypes.data"] + [f"x{k}.shape[{d}]" for d in range(arr[1])]
        else:
            argtypes.append(getattr(ctypes, native._CTYPES[code]))
            flat.append(f"x{k}")
    pre = [f"    b{j} = np.empty({int(size)}, np.{dt})" for j, (dt, size) in enumerate(buffers)]
    flat += [f"b{j}.ctypes.data" for j in range(len(buffers))] + ["r.ctypes.data"]
    argtypes += [ctypes.c_void_p] * (len(buffers) + 1)
    fn.argtypes = argtypes
    src = "\n".join([f"def launch({', '.join(params)}):", f"    r = np.full({int(returned)}, _MISSING, np.int64)"]
                    + pre + [f"    _fn({', '.join(flat)})",
                             "    return None if r[0] == _MISSING else tuple(r.tolist())"]) + "\n"
    namespace = {"np": np, "_fn": fn, "_MISSING": MISSING}
    exec(compile(src, f"<flamefuse filter launcher {path.stem}>", "exec"), namespace)
    launch = namespace["launch"]
    launch.library = lib
    return launch


native.LOADERS["filter"] = load
