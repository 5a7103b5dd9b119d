"""The buffer protocol for a Python class before Python 3.12.

``memoryview(x)``, ``struct.unpack_from(fmt, x)``, ``file.write(x)``, ``hashlib.sha1(x)`` and
every C extension that reads memory ask the object's *type* for its buffer slot
(``tp_as_buffer->bf_getbuffer``). From Python 3.12 on a class fills that slot by defining
``__buffer__`` (PEP 688), which :class:`flamefuse.lazy.array.LazyArray` does. Before 3.12 a
class written in Python has no way to fill it, and those calls raise ``TypeError`` where NumPy
works.

:func:`install(cls, source)` fills the slot of the heap type ``cls`` on CPython 3.10 and 3.11
with a ``ctypes`` callback: ``source(x)`` returns the NumPy array whose buffer ``x`` exports
(for a lazy array: its values, computed, and marked *exported* so that later lazy operations
see writes made through the buffer), and the callback asks that array for the buffer with the
caller's flags (``PyObject_GetBuffer``). The returned ``Py_buffer`` belongs to the NumPy array
(``view.obj``), so releasing it is NumPy's business, and NumPy's own checks apply (a writable
request on a read-only array, a contiguous request on a strided view).

Limits, all stated here because they cannot be removed from Python:

* Where NumPy (or computing the pending values) raises inside the slot, Python raises
  ``SystemError`` at the call (a ``ctypes`` callback cannot set an exception for its caller);
  the original error is printed with its traceback first. NumPy's error would be a
  ``BufferError``/``ValueError``; the program stops at the same line either way -- except
  where the caller drops the error and tries another way: ``numpy.asarray(x)`` asks for the
  buffer first and, when that fails, calls ``x.__array__()``, which found the failed flush's
  operations gone and returned the arrays' uninitialised memory. So the callback keeps an
  error raised while computing the values for its object (:func:`failure`) and
  ``LazyArray.__array__`` raises it (NumPy's own refusal to export a buffer, a datetime64
  array's, is not kept: ``__array__`` is then the right way).
* ``install`` checks the type object's layout (name, sizes, where the slot points) before it
  writes anything and returns ``False``, changing nothing, when a check fails (another Python
  implementation, a debug build with a different header): the calls then raise ``TypeError``
  as before.
* Subclasses of ``cls`` made after ``install`` inherit the slot; earlier ones do not.
"""
from __future__ import annotations

import ctypes
import sys
import weakref

_GETBUFFER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p, ctypes.c_int)
_WORD = ctypes.sizeof(ctypes.c_void_p)
# PyTypeObject: PyObject_VAR_HEAD (refcnt, type, size), then tp_name, tp_basicsize,
# tp_itemsize, ... tp_setattro, tp_as_buffer (the 21st word; stable since Python 3.0).
_HEAD = 2 if hasattr(sys, "getobjects") else 0        # Py_TRACE_REFS builds: two more words
_NAME, _BASICSIZE, _AS_BUFFER = _HEAD + 3, _HEAD + 4, _HEAD + 20
_KEEP: list = []                                      # callbacks live as long as the process


def needed() -> bool:
    """True where Python classes cannot export buffers themselves (CPython before 3.12)."""
    return sys.implementation.name == "cpython" and sys.version_info < (3, 12)


def _word(address: int, index: int) -> int:
    return ctypes.c_void_p.from_address(address + index * _WORD).value or 0


def _slot_address(cls: type) -> int:
    """The address of ``cls``'s ``bf_getbuffer`` slot, or 0 where the layout is not the one
    expected (nothing is written then)."""
    t = id(cls)
    if _word(t, _BASICSIZE) != cls.__basicsize__:
        return 0
    name = _word(t, _NAME)
    if not name or ctypes.string_at(name) != cls.__name__.encode():
        return 0
    as_buffer = _word(t, _AS_BUFFER)
    # a heap type's tp_as_buffer points into the type object itself (PyHeapTypeObject.as_buffer)
    if not t < as_buffer < t + type(cls).__sizeof__(cls):
        return 0
    if _word(as_buffer, 0) or _word(as_buffer, 1):
        return 0                                      # already has a buffer (inherited or set)
    return as_buffer


_FAILED: dict = {}      # id(obj) -> (a weak reference to obj, the error its buffer request raised)


def failure(obj):
    """The error a buffer request on ``obj`` raised that nobody has raised yet, taken (None
    when there is none): NumPy, whose buffer request failed, asks ``__array__`` next."""
    entry = _FAILED.pop(id(obj), None) if _FAILED else None
    return entry[1] if entry is not None and entry[0]() is obj else None


def install(cls: type, source) -> bool:
    """Fill ``cls``'s buffer slot so that a buffer request on ``x`` is answered by the NumPy
    array ``source(x)``. True when the slot was filled."""
    if not needed() or not (cls.__flags__ & (1 << 9)):   # Py_TPFLAGS_HEAPTYPE
        return False
    slot = _slot_address(cls)
    if not slot:
        return False
    # a private prototype: setting argtypes on ctypes.pythonapi's shared function would change
    # it for every other user in the process
    get = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p, ctypes.c_int)(
        ("PyObject_GetBuffer", ctypes.pythonapi))

    def getbuffer(obj, view, flags):
        try:                        # computing the values: an error here is kept (failure)
            arr = source(obj)
        except BaseException as e:                # cannot reach the caller: print, then fail
            _print_exc()
            _FAILED.clear()         # only the latest matters: NumPy asks __array__ at once
            try:                    # (its traceback is printed: kept, it would hold the frames)
                _FAILED[id(obj)] = (weakref.ref(obj), e.with_traceback(None))
            except TypeError:
                pass
            return -1
        try:                        # NumPy's own refusal (a datetime64 buffer): __array__ next
            return get(arr, view, flags)
        except BaseException:
            _print_exc()
            return -1

    callback = _GETBUFFER(getbuffer)
    _KEEP.append(callback)
    ctypes.c_void_p.from_address(slot).value = ctypes.cast(callback, ctypes.c_void_p).value
    return True


def _print_exc() -> None:
    """Print the error being handled, as ``traceback.print_exc()`` (imported here: a run
    without such an error does not import ``traceback``); never raises, as the C slot that
    calls it must return its -1."""
    try:
        import traceback
        traceback.print_exc()
    except BaseException:           # noqa: BLE001 -- nothing may escape to C
        pass
