"""The calls that run up the modules of :mod:`flamefuse.lazy`: one typed table, filled once.

The modules of the lazy front end import one another downwards only (no cycles)::

    kernel_types, indexing, hooks          dtype tables, index arithmetic, this table
      <- array                             the LazyArray class; making and reading lazy arrays
      <- eager                             NumPy now: small operands, fallbacks
      <- elementwise <- reductions <- products
      <- select, numpy_api, linalg, ...    selections, NumPy's API, linear-algebra calls

A few calls must run the other way: :class:`~flamefuse.lazy.array.LazyArray`'s methods
(``x + y``, ``x[k] = v``, ``x.sum()``, ``x @ y``, ``x[mask]``, ``np.add(x, y)``) reach the
modules that record those operations, which import the class; a fallback reaches lazy
selections; ``A @ B`` reaches the linear-algebra calls. Each such call is one named, typed
field of :class:`Hooks`, and :mod:`flamefuse.lazy` (its ``__init__``) fills every field in one
statement, :meth:`Hooks.install`, right after importing its modules. Importing any submodule
imports the package first, so the hooks are filled before any lazy array exists; a hook used
before that raises :class:`HookNotInstalled` naming it.
"""
from __future__ import annotations

from typing import Any, Callable

from flamefuse.values import fields, value


class HookNotInstalled(RuntimeError):
    """A hook of :data:`HOOKS` used before :mod:`flamefuse.lazy` installed it."""


class _Missing:
    """The value of a hook not yet installed: calling it or asking ``in`` it raises
    :class:`HookNotInstalled`; as a type it is nothing's (``type(x) is`` it is False)."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def _fail(self, *args, **kwargs):
        raise HookNotInstalled(f"flamefuse.lazy's hook {self.name!r} is not installed: import "
                               "flamefuse.lazy (its __init__ installs every hook)")

    __call__ = __contains__ = _fail

    def __repr__(self):
        return f"<hook {self.name!r} not installed>"


@value(frozen=False, slots=True)
class Hooks:
    """Every call that runs up the modules of :mod:`flamefuse.lazy` (module doc), by name; a
    value class (:mod:`flamefuse.values`: compared by its hooks, not hashable)."""

    # -- LazyArray's methods -> the operations they record
    select: Callable[..., Any] = _Missing("select")
    """``x[mask]``, a boolean mask of ``x``'s shape: :func:`flamefuse.lazy.selection.select`."""
    ufunc_call: Callable[..., Any] = _Missing("ufunc_call")
    """Operators, in-place operators and ``np.<ufunc>(x, ...)`` through ``__array_ufunc__``:
    :func:`flamefuse.lazy.elementwise.ufunc_call`."""
    assign: Callable[..., Any] = _Missing("assign")
    """``x[k] = v``, ``astype``, ``fill``: :func:`flamefuse.lazy.elementwise.assign`."""
    ufunc_where_into: Callable[..., Any] = _Missing("ufunc_where_into")
    """``x[mask] = scalar``: :func:`flamefuse.lazy.elementwise.ufunc_where_into`."""
    into_ndarray: Callable[..., Any] = _Missing("into_ndarray")
    """``ufunc(..., out=ndarray)``: :func:`flamefuse.lazy.elementwise._into_ndarray`."""
    reduce_call: Callable[..., Any] = _Missing("reduce_call")
    """``x.sum()``, ``x.prod()``, ``x.max()``, ``x.min()``, ``x.any()``, ``x.all()``:
    :func:`flamefuse.lazy.reductions.reduce_call`."""
    mean: Callable[..., Any] = _Missing("mean")
    """``x.mean()``: :func:`flamefuse.lazy.reductions.mean`."""
    matmul: Callable[..., Any] = _Missing("matmul")
    """``x @ y``, ``np.matmul(x, y)``: :func:`flamefuse.lazy.products.matmul`."""
    fallback: Callable[..., Any] = _Missing("fallback")
    """Forms the kernels do not run (``astype`` to other dtypes, ``mean(dtype=)``, a ufunc with
    ``out=``): :func:`flamefuse.lazy.eager.fallback`."""
    numpy_call: Callable[..., Any] = _Missing("numpy_call")
    """NumPy's function on lazy arguments (``__array_function__``; products' matrix forms, NumPy's
    BLAS call): :func:`flamefuse.lazy.numpy_api.call`."""
    ufunc_type: Callable[..., Any] = _Missing("ufunc_type")
    """The lazy ufunc object for ``ufunc.reduce``/``outer``/``at``... through ``__array_ufunc__``:
    :class:`flamefuse.lazy.numpy_api.Ufunc`."""
    native_functions: Any = _Missing("native_functions")
    """Names whose NumPy implementation is the right one (an ndarray method of that name runs
    without a warning): :data:`flamefuse.lazy.numpy_api.NATIVE`."""

    # -- operations -> lazy selections and linear-algebra calls
    selection_type: Any = _Missing("selection_type")
    """The type of a lazy selection (a ufunc over one goes to :attr:`apply_ufunc`, not a
    fallback): :class:`flamefuse.lazy.selection.Selection`."""
    apply_ufunc: Callable[..., Any] = _Missing("apply_ufunc")
    """A ufunc over lazy selections: :func:`flamefuse.lazy.selection.apply_ufunc`."""
    select_where: Callable[..., Any] = _Missing("select_where")
    """``where`` with a selection operand: :func:`flamefuse.lazy.selection.where`."""
    linalg_matmul: Callable[..., Any] = _Missing("linalg_matmul")
    """``A @ B`` of two 2-D lazy arrays, a recorded linear-algebra call:
    :func:`flamefuse.lazy.linalg.matmul`."""

    def install(self, **provided) -> None:
        """Fill every hook, by name, at once (``flamefuse/lazy/__init__.py``)."""
        names = set(fields(self))
        unknown, missing = sorted(set(provided) - names), sorted(names - set(provided))
        if unknown or missing:
            raise TypeError(f"Hooks.install: unknown hooks {unknown}, hooks not given {missing}")
        for name, hook in provided.items():
            setattr(self, name, hook)


HOOKS = Hooks()
