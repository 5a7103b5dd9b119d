"""Basic indices as views: which strided :class:`View` a NumPy index or a NumPy array selects.

:func:`index_view` is the view a basic index (ints, slices, ``...``, ``None``) selects of
a :class:`View` (None when the index is not basic: a boolean mask or fancy index, which
:class:`~flamefuse.lazy.array.LazyArray` hands to :mod:`flamefuse.lazy.selection` or to
NumPy); :func:`_plain_index` is its fast case (one Python int or slice per dimension, the
common subscript of a loop body). :func:`_basic` and :func:`_element` classify an index
the way NumPy does (a view; one element, read as NumPy's scalar). :func:`view_of` is the
view of a flat buffer that a NumPy array sharing its memory shows. Pure arithmetic on
views: nothing here records, syncs or knows the lazy array class.
"""
from __future__ import annotations

import numpy as np

from flamefuse.runtime.views import View, make_view


def view_of(nd: np.ndarray, flat: np.ndarray) -> View:
    """The :class:`View` of ``flat`` that NumPy array ``nd`` (sharing its memory) shows."""
    item = flat.itemsize
    offset = nd.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    return make_view(offset // item, nd.shape, tuple(s // item for s in nd.strides))


def _basic(key) -> bool:
    """Only ints and slices: NumPy returns a view, the one :func:`index_view` computes."""
    if type(key) is tuple:
        for k in key:
            if type(k) is not slice and type(k) is not int:
                return False
        return True
    return type(key) is slice or type(key) is int


def _element(key, ndim: int) -> bool:
    """An index of one integer per dimension (NumPy reads a scalar, a copy, there)."""
    if type(key) is not tuple:
        key = (key,)
    if len(key) != ndim:
        return False
    for k in key:
        if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            return False
    return True



def index_view(view: View, key) -> View | None:
    """The view selected by a basic index (ints, slices, Ellipsis, None); None if not basic."""
    key = key if isinstance(key, tuple) else (key,)
    if len(key) == len(view.shape) and all(type(k) is int or type(k) is slice for k in key):
        return _plain_index(view, key)
    if any(not (isinstance(k, (int, np.integer, slice)) or k is None or k is Ellipsis)
           or isinstance(k, (bool, np.bool_)) for k in key):
        return None
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if real > len(view.shape):
        raise IndexError(f"too many indices for array: array is {len(view.shape)}-dimensional, "
                         f"but {real} were indexed")
    fill = (slice(None),) * (len(view.shape) - real)
    at = next((k for k, x in enumerate(key) if x is Ellipsis), len(key))
    key = key[:at] + fill + key[at + 1:]
    offset, shape, strides, dim = view.offset, [], [], 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = view.shape[dim], view.strides[dim]
        dim += 1
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(s * step)
            offset += start * s
        else:
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {dim - 1} with size {n}")
            offset += (k % n) * s
    return make_view(offset, shape, strides)


def _plain_index(view: View, key: tuple) -> View:
    """:func:`index_view` of one Python int or slice per dimension (``a[k + 1:, k]``, the common
    case in a loop body), its View made directly (strides of extent-1 dimensions 0, as
    :func:`make_view` would)."""
    offset, shape, strides = view.offset, [], []
    for d, k in enumerate(key):
        n, s = view.shape[d], view.strides[d]
        if type(k) is slice:
            start, stop, step = k.indices(n)
            m = len(range(start, stop, step))
            shape.append(m)
            strides.append(0 if m == 1 else s * step)
            offset += start * s
        else:
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            offset += (k % n) * s
    return View(offset, tuple(shape), tuple(strides))

