"""Fused kernels kept as native shared libraries: Numba compiles them, the C linker links them,
``ctypes`` loads them, so a warm run never imports Numba.

Why: importing Numba and setting up its CPU target costs about 0.45 s per process, and loading
each cached kernel 3-8 ms more; a script's whole NumPy run often takes 1 s. A shared library
loads in well under a millisecond. The kernel is the same value
(:class:`flamefuse.runtime.code.Code`, made by :func:`flamefuse.runtime.kernel.generate`), rendered
by :func:`flamefuse.runtime.code.native_entry` as a C-ABI entry ``entry(CLO, CHI, NW, FIN, ...)``
instead of a Numba module (each array a pointer plus its extents, made a ``carray``; the
chunks ``range(CLO * NCH // NW, CHI * NCH // NW)``: workers ``CLO`` to ``CHI`` of ``NW`` take their
share, ``(0, 1, 1)`` all chunks, ``(0, 0, 1)`` none; the kernel's buffers (a full reduction's
partials, a float sum's levels) a caller's arrays of the most chunks the kernel can have; the
combining lines after the chunk loop run when ``FIN``; the chunk count is the kernel's own, a
function of its extents, :data:`flamefuse.runtime.kernel.SPLIT`, so a library gives the same
result with any number of threads), which
Numba compiles as a ``cfunc`` (same flags: ``error_model='numpy'``, no fastmath). Its object
code, emitted position-independent for this CPU, is linked with ``cc`` into
``<cache>/native/<digest>.so`` together with three stubs (the GIL helpers of Numba's cfunc
error path and the never-reached NRT destructor call: a ``carray`` has no meminfo) and two
strings: the entry's symbol (``flamefuse_entry``) and what its caller must know besides the
arguments (``flamefuse_layout``, :func:`layout`: parallel or not, the most chunks, the buffers'
types and sizes), so a library is loaded knowing only its key, the kernel's Numba source and
the argument types (:attr:`Code.source <flamefuse.runtime.code.Code.source>`, what a plan and
the preload list name it by).

Interface:

* The argument types (``flamefuse.sigcodes.signature(args) -> tuple | None``, its format there):
  the argument types as short codes (``'<f8:2w'`` a C-contiguous writeable 2-D float64 array,
  ``'Q'`` an ``np.uint64``, ``'d'`` an ``np.float64`` ...); None when some argument has no
  native form (a complex or bool scalar, a non-contiguous array): such calls stay with Numba.
  ``numba_types(sig)`` are the Numba types the same call compiles for.
* ``find(source, sig) -> callable | None``: the loaded library's launcher (same arguments as the
  Numba kernel; ``source`` the kernel's :attr:`Code.source`), None when none was built;
  ``STATS`` counts the ``libraries`` loaded and the
  seconds (``load_s``: about 0.2 ms each). A parallel kernel (its layout says so)
  runs its chunks on :data:`CHUNKS` threads (``ctypes`` releases the GIL during each call), each
  thread a contiguous share of them; ``launch.serial`` runs them all on the calling thread (the
  same chunks in order, so the same bits: what :func:`flamefuse.runtime.execute` calls for a step
  too small to pay for waking the team, :mod:`flamefuse.runtime.teamcost`).
* Loop nests (:class:`flamefuse.loopnest.nestcode.NestCode`, the product groups of
  :mod:`flamefuse.runtime.linalg`) are built the same way from their own C-ABI entry
  (``entry(CLO, CHI, NW, FIN, ROOT, ...)``: one call per root of the nest, a parallel root's
  fixed shares (:data:`flamefuse.loopnest.nestcode.SHARES`) divided among the team's ``NW``
  threads, then its private copies combined in share order: the Numba kernel's bits under any
  thread count); their layout (JSON) lists the roots and the private copies the launcher
  allocates (``SHARES`` rows each).
* Kinds defined above the run time render themselves (``code.native_form(sig)``: entry, types,
  layout, flags, the namespace the entry runs in, extra stubs) and register the loader of their
  layout's kind in :data:`LOADERS`: a synthesized linear-algebra chain's kernel
  (:mod:`flamefuse.synth.native_chain`: its entry calls the generated module's own kernel, the
  BLAS/LAPACK addresses passed in as a table, never compiled in), and a filter loop of a segment
  with boolean masks (:mod:`flamefuse.runtime.filter_native`: its kernel called by the entry
  with a worker share, a parallel loop's chunks on the team, the counts it returns written to
  the caller's array). Launchers reach the team through :data:`TEAM`, the calling process's
  (a forked child makes its own).
* ``built(source, sig)``: whether a library was built (a file check, no load).
* ``want(code, sig)`` notes a kernel (its :class:`Code` value) to build; ``build_wanted(progress)`` builds them (needs
  Numba and ``cc``; ``flamefuse fuse`` calls it after the script). A kernel whose object code
  needs symbols outside libc/libm/CPython (Numba's helper library), that Numba cannot compile
  as a ``cfunc``, or that the linker refuses while it links a library of the stubs alone, is
  not built; the ``<digest>.none`` marker keeps it from being tried again. A failure of the
  environment (no compiler or one that fails, a full disk: ``OSError``) leaves no marker: the
  next run tries again.
* A library is loaded only after checks (a damaged or planted library must never reach
  ``dlopen``: a truncated one crashed every later run with a bus error): the folder is the
  user's own private cache folder (:mod:`flamefuse.store`, kind ``native``), the ``.so`` is the
  user's own private regular file (:mod:`flamefuse.trust`) and its sidecar ``<digest>.sha256``,
  a store entry (``<sha256 hex> <size>``, written when it was built, stamped like every entry),
  records the library's size and digest, which its bytes have, with an ELF header. The
  library's name is a digest of the kernel, its types and the store's stamp (this flamefuse,
  Numba, llvmlite and CPU), and the ``.none`` marker is a store entry too. A library that
  fails (damaged, half written, with a sidecar of another version or none) is removed, so it
  is built again; a foreign one is refused with one warning.
* ``enabled()``: ``FLAMEFUSE_NATIVE=0`` (:mod:`flamefuse.switches`) turns the whole path off; without ``cc`` nothing is
  built and Numba serves every call.
"""
from __future__ import annotations

import os
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from flamefuse import store, switches, trust
from flamefuse.runtime import fpflags
from flamefuse.sigcodes import array_code
from flamefuse.runtime.chunks import CHUNKS

if TYPE_CHECKING:           # (imported where a library is built: loading one needs no kernel generator)
    from pathlib import Path

    from flamefuse.runtime.code import Code
from flamefuse.digest import sha256

STATS = Counter()                   # libraries loaded and the seconds it took (load_s)
_LOADED: dict = {}                  # (source, sig) -> launcher or None (no library)
_WANTED: dict = {}                  # (Code, sig) -> None, in first-call order
_LOADING = threading.Lock()
LOADERS: dict = {}                  # layout kind -> loader(lib, entry, path, sig, layout): kinds above
                                    # the run time (``chain``: flamefuse.synth.native_chain)
_STUBS = """
extern int PyGILState_Ensure(void);
extern void PyGILState_Release(int);
void numba_gil_ensure(int *state) { *state = PyGILState_Ensure(); }
void numba_gil_release(int *state) { PyGILState_Release(*state); }
void NRT_MemInfo_call_dtor(void *mi) { (void)mi; }
const char *flamefuse_entry = "%s";
const char *flamefuse_layout = "%s";
"""
# Numba's JIT binds fmod/fmodf to its own copies (x87 ``fprem``); glibc's (2.36) shifts one bit
# per step and made Leibniz's ``k % 2`` twice as slow. The same exact remainder, kept local to
# the library (-Bsymbolic); other targets keep libm's.
_FMOD = """
#define FPREM(T, name) T name(T x, T y) { long double r = x, d = y; \\
    __asm__ ("1:\\n\\tfprem\\n\\tfnstsw %%ax\\n\\ttestw $0x400, %%ax\\n\\tjnz 1b" \\
             : "+t"(r) : "u"(d) : "ax", "cc"); return (T)r; }
FPREM(double, fmod)
FPREM(float, fmodf)
"""
_STUBBED = {"numba_gil_ensure", "numba_gil_release", "NRT_MemInfo_call_dtor"}


def enabled() -> bool:
    return switches.on("FLAMEFUSE_NATIVE")


RECIPE = "5"        # how a library is built: a change rebuilds every library


def numba_types(sig: tuple) -> tuple:
    """Numba's argument types for signature codes (C-contiguous arrays, NumPy scalars): what the
    Numba kernel is compiled for when no library serves it."""
    from numba import from_dtype, types
    out = []
    for code in sig:
        arr = array_code(code)
        out.append(from_dtype(np.dtype(code)) if arr is None else
                   types.Array(from_dtype(np.dtype(arr[0])), arr[1], "C", readonly=not arr[2]))
    return tuple(out)


def _digest(source: str, sig: tuple) -> str:
    """The library's name: the kernel, its argument types, how it is built and the store's stamp
    of the kind ``native`` (flamefuse, Numba and llvmlite as installed, and this CPU: the object
    code is compiled for it; :func:`flamefuse.store.stamp`)."""
    text = "\0".join((source, *sig, store.stamp("native"), RECIPE))
    return sha256(text.encode()).hexdigest()[:32]


def _folder() -> str | None:
    """The libraries' folder, as a string (a ``Path`` works too, where a test gives one): finding,
    loading and building a library use ``os.path``, so a warm run imports no ``pathlib`` for
    them (about 4 ms where flamefuse is installed from a wheel: docs/startup.md)."""
    return store._folder("native")


def _library(folder: str, source: str, sig: tuple) -> str:
    """The file name of the library of ``source`` for ``sig`` in ``folder``."""
    return os.path.join(folder, f"{_digest(source, sig)}.so")


def _stem(path) -> str:
    """``Path(path).stem``."""
    return os.path.splitext(os.path.basename(path))[0]


def find(source: str, sig: tuple):
    """The native launcher of ``source`` for argument types ``sig``, or None."""
    key = (source, sig)
    if key in _LOADED:
        return _LOADED[key]
    with _LOADING:              # the start-up thread and the script may ask at once: load once
        if key not in _LOADED:
            _LOADED[key] = _find(source, sig)
    return _LOADED[key]


def _find(source: str, sig: tuple):
    folder = _folder() if enabled() else None
    if folder is None:
        return None
    path = _library(folder, source, sig)
    if not os.path.exists(path):
        return None
    t0 = time.perf_counter()
    try:
        if not _valid(path):
            raise ValueError(f"{path} does not match its recorded digest")
        launcher = _load(path, sig)
    except (OSError, AttributeError, ValueError):     # damaged, or linked elsewhere: removed,
        launcher = None                               # so that it is built again
        if trust.file_problem(path) is None:
            for name in (path, _sidecar(path)):
                try:
                    os.unlink(name)
                except FileNotFoundError:
                    pass
    STATS["libraries"] += launcher is not None
    STATS["load_s"] += time.perf_counter() - t0
    return launcher


def _sidecar(path):
    """The digest file beside the library ``path`` (``Path.with_suffix(".sha256")``; a string
    for a string)."""
    if isinstance(path, str):
        return os.path.splitext(path)[0] + ".sha256"
    return path.with_suffix(".sha256")


def _valid(path) -> bool:
    """Is the library at ``path`` safe to ``dlopen``: the user's own private file (else refused
    with one warning), with the size and SHA-256 its sidecar recorded when it was built, and an
    ELF (or, elsewhere, any) object header?"""
    data, note = trust.read_trusted(path), store.read(_sidecar(path), "native", _stem(path))
    if data is None or note is None:
        return False
    try:
        digest, size = note.decode().split()
        size = int(size)
    except (UnicodeDecodeError, ValueError):
        return False
    if len(data) != size or sha256(data).hexdigest() != digest:
        return False
    return data[:4] == b"\x7fELF" or not os.uname().sysname == "Linux"


def built(source: str, sig: tuple) -> bool:
    """Whether a library of ``source`` for ``sig`` was built (loaded already, or on disk; not
    loaded here: the start-up thread loads it)."""
    if _LOADED.get((source, sig)) is not None:
        return True
    folder = _folder() if enabled() else None
    return folder is not None and os.path.exists(_library(folder, source, sig))


def forget(source: str, sig: tuple) -> None:
    """Ask the disk again at the next :func:`find` of ``source`` for ``sig`` (a library that was
    missing may have been built since, by the background compiler: :mod:`.compiler`)."""
    if _LOADED.get((source, sig), 0) is None:
        with _LOADING:
            if _LOADED.get((source, sig), 0) is None:
                del _LOADED[(source, sig)]


def cannot_build(source: str, sig: tuple) -> bool:
    """Whether this kernel was tried and cannot be built as a library (its ``.none`` marker)."""
    folder = _folder() if enabled() else None
    return folder is not None and _gave_up(folder, _digest(source, sig))


def want(code: Code, sig: tuple) -> None:
    """Note the kernel ``code`` (a :class:`~flamefuse.runtime.code.Code`) to build for ``sig``."""
    if enabled() and sig is not None:
        _WANTED[(code, sig)] = None


def layout(code: Code) -> str:
    """What a library's caller must know besides the arguments, kept in the library
    (``flamefuse_layout``): ``"<parallel> <most chunks> <dtype>:<per chunk> ..."`` (the buffers)."""
    return " ".join([str(int(code.parallel)), str(code.most)] + [f"{dt}:{per}" for _, dt, per in code.buffers])


def _rendered(code, sig: tuple) -> tuple[str, list, str, dict, dict, str, frozenset]:
    """``(entry source, entry parameter types, layout, cfunc flags, namespace, stub text,
    stubbed names)`` of a kernel value: a fused run-time kernel (:class:`Code`), a loop nest
    (:class:`flamefuse.loopnest.nestcode.NestCode`, whose blocks are inlined into the entry and so
    compiled with its flags: ``fastmath`` where the Numba module's blocks have it), or a kind
    defined above the run time that renders itself (``code.native_form(sig)``: a synthesized
    linear-algebra chain, :mod:`flamefuse.synth.native_chain`, whose entry runs in its module's
    namespace and whose never-taken error path needs more stubs)."""
    if hasattr(code, "native_form"):
        return code.native_form(sig)
    from flamefuse.runtime.code import Code, native_entry     # (building only: a load needs neither)
    if isinstance(code, Code):
        return native_entry(code, sig), _numba_types(sig, code), layout(code), {}, {}, "", frozenset()
    from flamefuse.loopnest import nestcode
    flags = {"fastmath": set(nestcode.FASTMATH_FLAGS)} if code.fastmath else {}
    return (nestcode.native_entry(code, sig), _nest_types(sig, code), nestcode.layout(code), flags, {}, "",
            frozenset())


def _read_layout(text: str) -> tuple[bool, int, list]:
    parallel, most, *parts = text.split()
    return parallel == "1", int(most), [(dt, int(per)) for dt, per in (p.split(":") for p in parts)]


# -- building ----------------------------------------------------------------------------------

def _numba_types(sig: tuple, kernel: Code) -> list:
    """The entry's parameter types: the worker share and ``FIN``, each argument (an array's
    pointer and extents), the kernel's buffers."""
    from numba import from_dtype, types
    out = [types.uint64] * 4
    for code in sig:
        arr = array_code(code)
        if arr is not None:
            out += [types.CPointer(from_dtype(np.dtype(arr[0])))] + [types.uint64] * arr[1]
        else:
            out.append(from_dtype(np.dtype(code)))
    return out + [types.CPointer(from_dtype(np.dtype(dt))) for _, dt, _ in kernel.buffers]


def _nest_types(sig: tuple, code) -> list:
    """A loop-nest entry's parameter types: worker share, ``FIN`` and ``ROOT``, each argument
    (an array's pointer and extents, as int64), the private copies' pointers."""
    from numba import from_dtype, types
    out = [types.int64] * 5
    dtypes = {}
    for p, c in zip(code.params, sig):
        arr = array_code(c)
        if arr is not None:
            dtypes[p] = arr[0]
            out += [types.CPointer(from_dtype(np.dtype(arr[0])))] + [types.int64] * arr[1]
        else:
            out.append(from_dtype(np.dtype(c)))
    return out + [types.CPointer(from_dtype(np.dtype(dtypes[a]))) for r in code.roots for a, _, _, _ in r.privs]


def _unresolved(module, stubbed=frozenset()) -> list:
    """The functions ``module`` declares that neither the stubs (and ``stubbed``, the kind's own)
    nor this process (libc, libm, CPython) define: Numba's helper library, which a shared library
    cannot link."""
    import ctypes
    here = ctypes.CDLL(None)
    return [f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")
            and f.name not in _STUBBED and f.name not in stubbed and not hasattr(here, f.name)]


# Numba's exception path, which an entry that calls a compiled kernel has even where no value
# can raise (a linear-algebra chain's kernel, a filter loop): its helpers live in Numba's own
# library, so stubs stand for them; should the path ever run, the stub sets a RuntimeError and
# the caller, which sees its output sentinel unwritten, runs Numba's kernel or raises.
RAISE_STUBBED = frozenset({"numba_unpickle", "numba_runtime_build_excinfo_struct", "NRT_Free", "numba_do_raise"})


def raise_stubs(what: str) -> str:
    """The C text of :data:`RAISE_STUBBED` for a library of ``what`` (named in the error)."""
    return ("\nextern void PyErr_SetString(void *, const char *);\n"
            "extern void *PyExc_RuntimeError;\n"
            "void *numba_unpickle(const char *d, int n, const char *h) { (void)d; (void)n; (void)h; return 0; }\n"
            "void *numba_runtime_build_excinfo_struct(void *a, void *b) { (void)a; (void)b; return 0; }\n"
            "void NRT_Free(void *p) { (void)p; }\n"
            "int numba_do_raise(void *e) { (void)e;\n"
            f'    PyErr_SetString(PyExc_RuntimeError, "flamefuse: a native {what} raised"); return 0; }}\n')


def build(code: Code, sig: tuple, folder) -> bool:
    """Build the library of the kernel ``code`` for ``sig`` in ``folder``; False (and a ``.none``
    marker) when it cannot be linked on its own."""
    import platform
    import subprocess
    import tempfile

    import llvmlite.binding as ll
    from numba import cfunc, types
    digest = _digest(code.source, sig)
    text, argtypes, shape, flags, namespace, stubs, stubbed = _rendered(code, sig)
    exec(compile(text, f"<flamefuse native {digest}>", "exec"), namespace)
    cf = cfunc(types.void(*argtypes), error_model="numpy", **flags)(namespace["entry"])
    lib = cf._library
    lib._ensure_finalized()
    if _unresolved(lib._final_module, stubbed):
        _give_up(folder, digest)
        return False
    cg = lib._codegen
    tm = ll.Target.from_default_triple().create_target_machine(
        cpu=cg._get_host_cpu_name(), features=cg._tm_features, opt=3, reloc="pic",
        codemodel="default")
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build.") as tmp:
        from pathlib import Path
        obj, stub, out = Path(tmp, "k.o"), Path(tmp, "stubs.c"), Path(tmp, "k.so")
        obj.write_bytes(tm.emit_object(lib._final_module))
        x86 = platform.machine() in ("x86_64", "AMD64")
        stub.write_text(_STUBS % (cf.native_name, shape.replace('"', '\\"')) + stubs + (_FMOD if x86 else ""))
        done = subprocess.run([*_cc(), "-shared", "-fPIC", "-O2", "-Wl,-Bsymbolic", "-o", str(out),
                               str(obj), str(stub), "-lm"], capture_output=True, text=True)
        if done.returncode != 0:
            if _cc_links(folder):       # the compiler works: this kernel cannot be linked
                _give_up(folder, digest)
            return False
        data = out.read_bytes()
        library = os.path.join(folder, f"{digest}.so")
        if store.write(_sidecar(library), "native", digest,
                       f"{sha256(data).hexdigest()} {len(data)}\n") is None:
            return False
        os.chmod(out, 0o644)
        os.replace(out, library)
    return True


def _give_up(folder, digest: str) -> None:
    """The ``.none`` marker: this kernel itself cannot be built (never tried again)."""
    store.write(os.path.join(folder, f"{digest}.none"), "native", digest, b"")


def _gave_up(folder, digest: str) -> bool:
    return store.read(os.path.join(folder, f"{digest}.none"), "native", digest) is not None


def _cc_links(folder) -> bool:
    """Whether the compiler links a library of the stubs alone (else a failure is the
    environment's, not the kernel's). Asked once per process and compiler."""
    cc = tuple(_cc() or ())
    if cc not in _CC_LINKS:
        import subprocess
        import tempfile
        try:
            with tempfile.TemporaryDirectory(dir=folder, prefix=".probe.") as tmp:
                from pathlib import Path
                stub = Path(tmp, "stubs.c")
                stub.write_text(_STUBS % ("probe", "0 1"))
                done = subprocess.run([*cc, "-shared", "-fPIC", "-o", str(Path(tmp, "p.so")),
                                       str(stub)], capture_output=True)
                _CC_LINKS[cc] = done.returncode == 0
        except (OSError, IndexError):
            _CC_LINKS[cc] = False
    return _CC_LINKS[cc]


_CC_LINKS: dict = {}


def _cc() -> list | None:
    """The C compiler's command: ``$CC`` (split like a shell word list), else ``cc`` or ``gcc``."""
    import shlex
    import shutil
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    return shlex.split(cc) if cc else None


def build_wanted(progress=None) -> int:
    """Build every wanted library not built or tried before; returns how many were built."""
    folder = _folder()
    if folder is None or not _WANTED or _cc() is None:
        _WANTED.clear()
        return 0
    todo = [(code, sig) for code, sig in _WANTED
            if not os.path.exists(_library(folder, code.source, sig))
            and not _gave_up(folder, _digest(code.source, sig))]
    _WANTED.clear()
    built = 0
    for k, (code, sig) in enumerate(todo):
        if progress is not None:
            progress(k, len(todo))
        built += build_one(code, sig, folder)
    return built


def build_one(code, sig: tuple, folder) -> bool:
    """Build one wanted library (:func:`build`); a failure of the environment (no compiler, a
    full disk) is tried again next run, a kernel Numba cannot compile as a ``cfunc`` is marked
    ``.none`` (it stays with Numba)."""
    try:
        return build(code, sig, folder)
    except (OSError, MemoryError):      # no compiler, a full disk: tried again next run
        return False
    except Exception:          # noqa: BLE001 -- Numba cannot compile this form: stay with Numba
        _give_up(folder, _digest(code.source, sig))
        return False


# -- loading and calling -----------------------------------------------------------------------

_CTYPES = {"d": "c_double", "f": "c_float", "q": "c_int64", "i": "c_int32", "h": "c_int16",
           "b": "c_int8", "Q": "c_uint64", "I": "c_uint32", "H": "c_uint16", "B": "c_uint8"}


def _addr(x) -> int:
    """The address of a C-contiguous array's data. ``x.ctypes.data`` makes a Python object per
    call (about 1 us, one per array argument and buffer of every launch); a ``ctypes`` view of
    the buffer's first byte costs 0.15 us. A read-only or empty array (no writeable byte to
    view) takes ``x.ctypes.data``. (Set up by :func:`_load`: ``ctypes`` is imported there.)"""
    try:
        return _BYTE[1](_BYTE[0](x))
    except (TypeError, ValueError, BufferError):
        return x.ctypes.data


_BYTE: list = []            # ctypes.c_char.from_buffer, ctypes.addressof (the first _load)


def _load(path, sig: tuple):
    """The launcher of a built library: a function of the kernel's own arguments."""
    import ctypes
    if not _BYTE:
        _BYTE[:] = [ctypes.c_char.from_buffer, ctypes.addressof]
    lib = ctypes.CDLL(str(path))
    name = ctypes.c_char_p.in_dll(lib, "flamefuse_entry").value.decode()
    fn = getattr(lib, name)
    fn.restype = None
    text = ctypes.c_char_p.in_dll(lib, "flamefuse_layout").value.decode()
    if text.startswith('{"nest"'):
        return _load_nest(lib, fn, path, sig, text)
    if text.startswith("{"):             # a kind defined above the run time (its registered loader)
        import json
        kind = next(iter(json.loads(text)), None)
        if kind not in LOADERS:
            raise ValueError(f"{path}: no loader of the kind {kind!r} in this process")
        from pathlib import Path
        return LOADERS[kind](lib, fn, Path(path), sig, text)     # (a Path, as they take it)
    parallel, most, parts = _read_layout(text)
    argtypes = [ctypes.c_uint64] * 4
    params, flat = [], []
    for k, code in enumerate(sig):
        params.append(f"x{k}")
        arr = array_code(code)
        if arr is not None:
            nd = arr[1]
            argtypes += [ctypes.c_void_p] + [ctypes.c_uint64] * nd
            flat += [f"_addr(x{k})"] + [f"x{k}.shape[{d}]" for d in range(nd)]
        else:
            argtypes.append(getattr(ctypes, _CTYPES[code]))
            flat.append(f"x{k}")
    argtypes += [ctypes.c_void_p] * len(parts)
    fn.argtypes = argtypes
    pre = [f"    p{j} = np.empty({most * per}, np.{dt})" for j, (dt, per) in enumerate(parts)]
    flat += [f"_addr(p{j})" for j in range(len(parts))]
    args = ", ".join(flat)
    alone = [f"    _fn(0, 1, 1, 1, {args})"]
    if parallel and CHUNKS > 1:
        call = [f"    _team.run(_fn, ({args},))"]
        if parts:
            call.append(f"    _fn(0, 0, 1, 1, {args})")
    else:
        call = alone
    head = f"({', '.join(params)}):"
    text = "\n".join([f"def launch{head}"] + pre + call + [f"def serial{head}"] + pre + alone) + "\n"
    namespace = {"np": np, "_fn": fn, "_team": TEAM, "_addr": _addr}
    exec(compile(text, f"<flamefuse launcher {_stem(path)}>", "exec"), namespace)
    launch, alone = namespace["launch"], namespace["serial"]
    launch.library = alone.library = lib        # keep the library loaded while a launcher lives
    launch.serial = alone if call is not alone else launch
    return launch


def _load_nest(lib, fn, path: Path, sig: tuple, text: str):
    """The launcher of a loop-nest library (:mod:`flamefuse.loopnest.nestcode`): the kernel's own
    arguments; each root in order, a parallel one's shares on
    the team's threads, then its combining step."""
    import ctypes
    import json
    from flamefuse.loopnest.nestcode import SHARES
    roots = json.loads(text)["nest"]
    nw = CHUNKS if any(par for par, _ in roots) and CHUNKS > 1 else 1
    argtypes = [ctypes.c_int64] * 5
    params, flat = [], []
    for k, code in enumerate(sig):
        params.append(f"x{k}")
        arr = array_code(code)
        if arr is not None:
            argtypes += [ctypes.c_void_p] + [ctypes.c_int64] * arr[1]
            flat += [f"_addr(x{k})"] + [f"x{k}.shape[{d}]" for d in range(arr[1])]
        else:
            argtypes.append(getattr(ctypes, _CTYPES[code]))
            flat.append(f"x{k}")
    pre, consts, j = [], {}, 0
    for _, privs in roots:
        for index, dtype, ident in privs:
            consts[f"_i{j}"] = ident
            pre.append(f"    p{j} = np.full(({SHARES},) + x{index}.shape, _i{j}, dtype=np.{'bool_' if dtype == 'bool' else dtype})")
            flat.append(f"_addr(p{j})")
            argtypes.append(ctypes.c_void_p)
            j += 1
    fn.argtypes = argtypes
    args = ", ".join(flat)
    def calls(nw):
        out = []
        for r, (parallel, privs) in enumerate(roots):
            if not parallel:
                out.append(f"    _fn(0, 1, 1, 1, {r}, {args})")
                continue
            out.append(f"    _team.run(_fn, ({r}, {args}))" if nw > 1 else f"    _fn(0, 1, 1, 0, {r}, {args})")
            if privs:
                out.append(f"    _fn(0, 0, {nw}, 1, {r}, {args})")
        return out
    head = f"({', '.join(params)}):"
    text = "\n".join([f"def launch{head}"] + pre + calls(nw) + [f"def serial{head}"] + pre + calls(1)) + "\n"
    namespace = {"np": np, "_fn": fn, "_team": TEAM if nw > 1 else None, "_addr": _addr, **consts}
    exec(compile(text, f"<flamefuse nest launcher {_stem(path)}>", "exec"), namespace)
    launch, alone = namespace["launch"], namespace["serial"]
    launch.library = alone.library = lib
    launch.serial = alone if nw > 1 else launch       # every share on the calling thread
    return launch


class _Team:
    """``size - 1`` worker threads; ``run(fn, args)`` calls ``fn(c, c + 1, size, 0, *args)`` (the
    c-th share of the chunks) for every c below ``size``, share 0 on the calling thread, and
    returns when all are done. Each worker clears its floating-point flags before its share and
    tests them after (flags are per thread); ``run`` adds what they raised to
    :data:`flamefuse.runtime.fpflags.WORKERS` (share 0's stay in the calling thread's flags)."""

    def __init__(self, size: int):
        self.jobs = [None] * size
        self.go = [threading.Lock() for _ in range(size)]
        self.done = [threading.Lock() for _ in range(size)]
        self.busy = threading.Lock()
        self.fp = [0] * size        # the NumPy bits of the flags each worker's share raised
        self.hit = False            # set by a worker whose share raised one
        for c in range(1, size):
            self.go[c].acquire()
            self.done[c].acquire()
            threading.Thread(target=self._work, args=(c,), daemon=True,
                             name=f"flamefuse-chunk-{c}").start()

    def _work(self, c: int) -> None:
        while True:
            self.go[c].acquire()
            fn, args = self.jobs[c]
            try:
                fpflags.clear_thread()
                fn(c, c + 1, len(self.jobs), 0, *args)
                bits = fpflags.thread_bits()
                if bits:
                    self.fp[c] = bits
                    self.hit = True
            finally:
                self.jobs[c] = None
                self.done[c].release()

    def run(self, fn, args) -> None:
        with self.busy:
            size = len(self.jobs)
            for c in range(1, size):
                self.jobs[c] = (fn, args)
                self.go[c].release()
            try:
                fn(0, 1, size, 0, *args)
            finally:
                self._join(size)
            if self.hit:
                self.hit = False
                for c in range(1, size):
                    fpflags.WORKERS[0] |= self.fp[c]
                    self.fp[c] = 0

    def _join(self, size: int) -> None:
        """Wait for every worker, even through Ctrl-C (raised after: a worker still running
        would otherwise release its lock into the next call, which would not wait for it)."""
        stopped = None
        for c in range(1, size):
            while True:
                try:
                    self.done[c].acquire()
                    break
                except KeyboardInterrupt as err:
                    stopped = err
        if stopped is not None:
            raise stopped


_TEAM: list = []
if hasattr(os, "register_at_fork"):        # a forked child has none of the parent's threads
    os.register_at_fork(after_in_child=_TEAM.clear)


def _team() -> _Team:
    if not _TEAM:
        _TEAM.append(_Team(CHUNKS))
    return _TEAM[0]


class _CurrentTeam:
    """What launchers call: the team of the process that calls (found at each call, never kept
    in the launcher: a child forked after a library was loaded has none of its parent's worker
    threads, and a launcher holding the parent's team waited for them forever)."""

    def run(self, fn, args) -> None:
        _team().run(fn, args)


TEAM = _CurrentTeam()
