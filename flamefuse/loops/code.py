"""A compiled loop as a native library: its value (:class:`LoopCode`), entry and launcher.

:class:`LoopCode` ``(source)`` names a rendered loop (:func:`of_loop`: the text of
:mod:`flamefuse.loops.numba_parts` followed by the rendered ``loop(<params>, _fp, _fg, _w, _E, _S)``
of :func:`flamefuse.loops.render.render`, so the library's key covers every line it runs). Like the other kinds defined above the run
time (:mod:`flamefuse.synth.native_chain`, :mod:`flamefuse.runtime.filter_native`) it renders
its own native form and registers the loader of its layout's kind (``loop``) with
:data:`flamefuse.runtime.native.LOADERS`; everything else (the library's name, build, trust
checks, ``.none`` markers, the background compiler) is :mod:`flamefuse.runtime.native`'s and
:mod:`flamefuse.runtime.compiler`'s. A background job names the loop by its module name only
(:meth:`LoopCode.plain`); the worker reads the text back from the user's own cache (kind
``kernels``, written by :meth:`LoopCode.keep`) and checks it is that loop (:meth:`LoopCode.of`).

The entry (:meth:`LoopCode.native_form`) is a ``cfunc``
``entry(<each argument: an array's pointer and extents, an int, a float>, fp, fg, s_p, s_e, s_s,
out_p)``: each array a C-contiguous ``carray``, ``fp`` and ``fg`` the addresses of NumPy's
``cblas_ddot`` and ``cblas_dgemv``, the scratch buffer ``s`` which the loop splits into the
buffers it declares (its ``# buffers: NE NS`` line: ``NE`` of ``s_e`` doubles, the largest
extent of an argument, ``NS`` of ``s_s``, the largest size; the layout carries the two counts,
so the launcher allocates ``NE * s_e + NS * s_s`` doubles). It calls the loop
(``njit``, ``error_model='numpy'``, ``boundscheck=True``) inside ``try``/``except Exception``
and writes ``out[0]``: 1 when the loop ended, 2 when it raised (an index out of range, lengths
that differ); 0 (its sentinel) means the entry did not finish. The launcher returns that
status; anything but 1 makes the guard run the loop as written (:mod:`flamefuse.loops.guard`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from flamefuse.digest import sha256
from flamefuse.runtime import native

RAISE_STUBS = native.raise_stubs("compiled loop")
RAISE_STUBBED = native.RAISE_STUBBED


ENTRY = "2"         # the entry's form (native_form): a change rebuilds every loop library
_PARTS: list = []


def parts_text() -> str:
    """The text of :mod:`flamefuse.loops.numba_parts` (read once): part of every loop module, so
    a library's key covers the dot products it calls."""
    if not _PARTS:
        from pathlib import Path
        _PARTS.append(Path(__file__).with_name("numba_parts.py").read_text())
    return _PARTS[0]


def of_loop(text: str) -> "LoopCode":
    """The value of a rendered loop (:func:`flamefuse.loops.render.render`)."""
    return LoopCode(f"# flamefuse loop module, entry {ENTRY}\n{parts_text()}\n\n{text}")


def module_name(source: str) -> str:
    return f"ffl_{sha256(source.encode()).hexdigest()[:24]}"


@dataclass(frozen=True)
class LoopCode:
    source: str         # the rendered loop module's text

    def plain(self) -> tuple:
        return (module_name(self.source),)

    def keep(self) -> bool:
        """Write the text to the user's cache (kind ``kernels``) for the background compiler."""
        from flamefuse import store
        from flamefuse.cache import cached_source
        name = module_name(self.source)
        if cached_source("kernels", name) == self.source:
            return True
        return store.put("kernels", name, self.source, ".py") is not None

    @classmethod
    def of(cls, plain) -> "LoopCode":
        from flamefuse.cache import cached_source
        (name,) = (str(x) for x in plain)
        text = cached_source("kernels", name)
        if text is None or module_name(text) != name or "\ndef loop(" not in text:
            raise ValueError(f"no compiled loop module {name} in the cache")
        return cls(text)

    def native_form(self, sig: tuple):
        """``(entry source, entry parameter types, layout, cfunc flags, namespace, stub text,
        stubbed names)`` for :func:`flamefuse.runtime.native.build`."""
        from numba import carray, types
        from flamefuse.jit import njit
        namespace = {"carray": carray, "__name__": module_name(self.source)}
        exec(compile(self.source, f"<flamefuse loop {module_name(self.source)}>", "exec"), namespace)
        namespace["loop"] = njit(namespace["loop"], cache=False, error_model="numpy", boundscheck=True)
        names, argtypes, pass_ = [], [], []
        for k, code in enumerate(sig):
            if code.startswith("a"):
                nd = int(code[1:])
                dims = [f"a{k}_d{d}" for d in range(nd)]
                names += [f"a{k}_p"] + dims
                argtypes += [types.CPointer(types.float64)] + [types.int64] * nd
                pass_.append(f"carray(a{k}_p, ({', '.join(dims)},))")
            else:
                names.append(f"a{k}")
                argtypes.append(types.int64 if code == "i" else types.float64)
                pass_.append(f"a{k}")
        ne, ns = buffers(self.source)
        names += ["fp", "fg", "s_p", "s_e", "s_s", "out_p"]
        argtypes += [types.int64, types.int64, types.CPointer(types.float64), types.int64, types.int64,
                     types.CPointer(types.int64)]
        text = "\n".join([
            f"def entry({', '.join(names)}):",
            "    out = carray(out_p, (1,))",
            f"    s = carray(s_p, ({ne} * s_e + {ns} * s_s,))",
            "    try:",
            f"        loop({', '.join(pass_)}, fp, fg, s, s_e, s_s)",
            "        out[0] = 1",
            "    except Exception:",
            "        out[0] = 2"]) + "\n"
        layout = json.dumps({"loop": list(sig), "buffers": [ne, ns]})
        return text, argtypes, layout, {}, namespace, RAISE_STUBS, RAISE_STUBBED


def buffers(source: str) -> tuple:
    """The loop's scratch buffers, ``(NE, NS)``, from its ``# buffers:`` line."""
    for line in source.splitlines():
        if line.startswith("# buffers: "):
            ne, ns = line.split()[2:4]
            return int(ne), int(ns)
    raise ValueError("a loop module without its buffers line")


def load(lib, fn, path, sig: tuple, text: str):
    """The launcher of a built loop library: ``launch(fp, fg, extent, size, *args) -> status``
    (1: the loop ran)."""
    import ctypes
    layout = json.loads(text)
    if layout["loop"] != list(sig):
        raise ValueError(f"{path} was built for other argument types")
    ne, ns = layout["buffers"]
    argtypes, kinds = [], []
    for code in sig:
        if code.startswith("a"):
            argtypes += [ctypes.c_void_p] + [ctypes.c_int64] * int(code[1:])
            kinds.append(True)
        else:
            argtypes.append(ctypes.c_int64 if code == "i" else ctypes.c_double)
            kinds.append(False)
    fn.argtypes = argtypes + [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                              ctypes.c_void_p]

    def launch(fp, fg, extent, size, *args):
        flat = []
        for a, is_array in zip(args, kinds):
            if is_array:
                flat.append(a.ctypes.data)
                flat.extend(a.shape)
            else:
                flat.append(a)
        e, z = max(1, extent), (max(1, size) if ns else 0)
        s = np.empty(ne * e + ns * z)
        out = np.zeros(1, np.int64)
        fn(*flat, fp, fg, s.ctypes.data, e, z, out.ctypes.data)
        return int(out[0])

    launch.library = lib
    return launch


native.LOADERS["loop"] = load
