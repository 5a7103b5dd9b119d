"""Filter loops (:mod:`flamefuse.runtime.filter_kernel`) as native libraries, so a warm run of a
script with boolean masks imports no Numba (#29).

A filter loop's kernel is the Numba module text ``Loop.source`` (``kernel(n, a0, ...)``
returning ``(n, c_G...)``). :class:`FilterCode` is that text as a kernel value for
:mod:`flamefuse.runtime.native`'s one build, trust and load path; it renders itself
(``native_form``, the interface of kinds defined outside :mod:`flamefuse.runtime.code`):

* the kernel's function, compiled without ``parallel``, with the worker share ``CLO, CHI, NW,
  FIN`` in front (:meth:`FilterCode.shared`): a parallel loop's chunks are a constant number
  (:data:`flamefuse.runtime.kernel.SPLIT`), each with its own accumulators combined pairwise
  after the loop, so the native team's threads (:data:`flamefuse.runtime.kernel.CHUNKS`) take
  contiguous shares of them and one last call (``FIN``) combines them: the Numba kernel's bits
  under any thread count;
  each array it allocates (a parallel loop's partials, a float sum's levels: the only
  ``np.empty(...)`` lines at the top of its body) becomes the caller's buffer of
  :func:`bound` elements, sliced to the size the line asked for; a source with another
  allocation has no native form (not built, it stays with Numba);
* the C-ABI entry ``entry(CLO, CHI, NW, FIN, n, <each argument: an array's pointer and extents,
  a scalar>, <each buffer's pointer>, ret, done)`` calls it and, when ``FIN``, writes the returned
  counts into ``ret``, else marks its share in ``done`` (a share that did not finish, or a
  ``ret`` still :data:`MISSING`, makes the launcher return None: Numba's kernel runs instead);
* the layout (JSON) ``{"filter": [returned values, [[dtype, elements], ...], parallel]}``, read by
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
from flamefuse.runtime.kernel import CHUNKS, SPLIT
from flamefuse.runtime.summation import LEVELS
from flamefuse.sigcodes import array_code

MISSING = -(2 ** 62)        # ``ret[0]`` before the call: still there, the kernel did not finish
# Numba's exception path, which an entry that calls a kernel has even where no value can raise:
# never taken by these loops' arithmetic; if it were, the launcher sees MISSING and the caller
# runs Numba's kernel instead (the loop writes only its own fresh buffers: it may run again).
RAISE_STUBS = native.raise_stubs("filter loop")
RAISE_STUBBED = native.RAISE_STUBBED
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

    def shared(self) -> tuple[str, list, bool]:
        """``(text, buffers, parallel)``: the kernel's function for the entry, its allocations
        read from parameters ``_b0, _b1...`` (``buffers``: their dtypes), with the worker share
        ``CLO, CHI, NW, FIN`` in front: a parallel loop's ``prange`` over its chunks becomes
        workers ``CLO`` to ``CHI`` of ``NW``'s share of them, and the lines after it (combining the
        chunks' partials, the outputs, the counts returned) run when ``FIN`` (a call with no
        chunks, after the team's). ValueError when the source is not of the expected form."""
        lines = self.source.splitlines()
        head = [k for k, s in enumerate(lines) if s.startswith("def kernel(")]
        if len(head) != 1 or not lines[head[0] - 1].startswith("@njit(") or not lines[-1].startswith(
                "    return (n, "):
            raise ValueError("not a filter kernel")
        body, buffers, parallel, tail = [], [], False, None
        for s in lines[head[0] + 1:-1]:
            m = _ALLOC.match(s)
            if m:
                body.append(f"    {m.group(1)} = _b{len(buffers)}[:{m.group(2)}]")
                buffers.append(m.group(3))
            elif s == "    for ch in prange(NCH):":
                body.append("    for ch in range(CLO * NCH // NW, CHI * NCH // NW):")
                parallel, tail = True, len(body)
            else:
                body.append(s)
        if "prange" in "\n".join(body):
            raise ValueError("a prange other than the chunk loop: no native form")
        ret = lines[-1]
        if parallel:
            k = tail + 1
            while k < len(body) and (body[k].startswith("        ") or not body[k].strip()):
                k += 1                  # the chunk loop's body
            counts = ret.split("return (n, ")[1].count(",")
            zeros = "".join("0, " for _ in range(counts))
            body = (body[:k] + ["    if FIN != 0:"] + ["    " + x for x in body[k:]]
                    + ["    " + ret, f"    return (n, {zeros})"])
        else:
            body.append(ret)
        text = "\n".join(body)
        if "np.empty" in text or "np.zeros" in text or "np.full" in text or "np.ones" in text:
            raise ValueError("the kernel allocates arrays: no native form")
        params = lines[head[0]][len("def kernel("):-2]
        extra = "".join(f", _b{j}" for j in range(len(buffers)))
        return f"def kernel(CLO, CHI, NW, FIN, {params}{extra}):\n{text}\n", buffers, parallel

    def native_form(self, sig: tuple):
        """``(entry source, entry parameter types, layout, cfunc flags, namespace, stub text,
        stubbed names)`` for :func:`flamefuse.runtime.native.build`."""
        from numba import carray, from_dtype, types

        from flamefuse.jit import njit
        kernel_text, buffers, parallel = self.shared()
        returned = self.source.split("return (n, ")[-1].count(",") + 1
        from flamefuse.runtime import npcomplex
        namespace = {"np": np, "carray": carray, **(npcomplex.jit_names() if "cmul" in kernel_text else {})}
        exec(compile(kernel_text, "<flamefuse filter kernel>", "exec"), namespace)
        namespace["kernel"] = njit(namespace["kernel"], cache=False, error_model="numpy")
        names, argtypes, pass_ = ["CLO", "CHI", "NW", "FIN"], [types.int64] * 4, ["CLO", "CHI", "NW", "FIN"]
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
        names += ["ret_p", "done_p"]
        argtypes += [types.CPointer(types.int64)] * 2
        text = "\n".join([f"def entry({', '.join(names)}):",
                          f"    r = kernel({', '.join(pass_)})",
                          "    if FIN != 0:",
                          f"        ret = carray(ret_p, ({returned},))"]
                         + [f"        ret[{j}] = r[{j}]" for j in range(returned)]
                         + ["    else:", "        done = carray(done_p, (NW,))", "        done[CLO] = 1"]) + "\n"
        layout = json.dumps({"filter": [returned, [[dt, bound()] for dt in buffers], parallel]})
        return text, argtypes, layout, {}, namespace, RAISE_STUBS, RAISE_STUBBED


def load(lib, fn, path, sig: tuple, text: str):
    """The launcher of a filter loop's library: the kernel's arguments, its returned tuple (None
    when the kernel did not finish: the caller runs Numba's). A parallel loop's chunks run on
    the native team's threads (:data:`flamefuse.runtime.kernel.CHUNKS`; each marks its share
    done), then one call combines them."""
    import ctypes
    returned, buffers, parallel = json.loads(text)["filter"]
    argtypes, params, flat = [ctypes.c_int64] * 4, [], []
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
    flat += [f"b{j}.ctypes.data" for j in range(len(buffers))] + ["r.ctypes.data", "d.ctypes.data"]
    argtypes += [ctypes.c_void_p] * (len(buffers) + 2)
    fn.argtypes = argtypes
    args = ", ".join(flat)
    team = parallel and CHUNKS > 1
    if team:
        call = [f"    _team.run(_fn, ({args},))", "    if not d.all():", "        return None",
                f"    _fn(0, 0, 1, 1, {args})"]
    else:
        call = [f"    _fn(0, 1, 1, 1, {args})"]
    src = "\n".join([f"def launch({', '.join(params)}):", f"    r = np.full({int(returned)}, _MISSING, np.int64)",
                     f"    d = np.zeros({CHUNKS if team else 1}, np.int64)"]
                    + pre + call + ["    return None if r[0] == _MISSING else tuple(r.tolist())"]) + "\n"
    namespace = {"np": np, "_fn": fn, "_MISSING": MISSING, "_team": native.TEAM if team else None}
    exec(compile(src, f"<flamefuse filter launcher {path.stem}>", "exec"), namespace)
    launch = namespace["launch"]
    launch.library = lib
    return launch


native.LOADERS["filter"] = load
