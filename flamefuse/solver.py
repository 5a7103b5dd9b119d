"""OR-Tools' CP-SAT module (``cp_model``), imported without importing pandas.

``ortools.sat.python.cp_model`` imports pandas (about 0.2 s, most of the time
``flamefuse derive`` spent importing the solver) only for its helpers that take
or return ``pd.Series`` / ``pd.Index`` (``new_int_var_series`` and the like),
which flamefuse never calls.  While ``cp_model`` is imported here, ``pandas`` is
a stand-in module whose ``Index`` and ``Series`` defer to the real pandas:

* ``isinstance(x, Series)`` is pandas' own answer once pandas is imported, and
  False before (no pandas object can exist then);
* calling ``Series(...)`` / ``Index(...)``, or any other attribute of the
  stand-in, imports pandas and uses the real thing.

So OR-Tools' pandas helpers still work in every process; pandas is imported
when one is first used.  When pandas is already imported, ``cp_model`` is
imported as usual.  ``from flamefuse.solver import cp_model``.
"""
from __future__ import annotations

import importlib
import sys
import types


class _StandIn(types.ModuleType):
    """``pandas`` while cp_model is imported: anything but Index / Series is the real pandas's."""

    def __getattr__(self, name):
        return getattr(_pandas(), name)


def _pandas():
    """The real pandas (imported now if needed; never the stand-in)."""
    if isinstance(sys.modules.get("pandas"), _StandIn):
        del sys.modules["pandas"]
    return importlib.import_module("pandas")


class _Deferred(type):
    """A class that stands for pandas' class of the same name."""

    def __instancecheck__(cls, obj):
        real = sys.modules.get("pandas")
        return real is not None and not isinstance(real, _StandIn) and isinstance(obj, getattr(real, cls.__name__))

    def __subclasscheck__(cls, sub):
        real = sys.modules.get("pandas")
        return real is not None and not isinstance(real, _StandIn) and issubclass(sub, getattr(real, cls.__name__))

    def __call__(cls, *args, **kwargs):
        return getattr(_pandas(), cls.__name__)(*args, **kwargs)

    def __getattr__(cls, name):
        return getattr(getattr(_pandas(), cls.__name__), name)


class Index(metaclass=_Deferred):
    pass


class Series(metaclass=_Deferred):
    pass


def _import_cp_model():
    if "pandas" in sys.modules or "ortools.sat.python.cp_model" in sys.modules:
        return importlib.import_module("ortools.sat.python.cp_model")
    stand_in = _StandIn("pandas", "flamefuse.solver: stands for pandas while OR-Tools' cp_model is imported")
    stand_in.Index, stand_in.Series = Index, Series
    sys.modules["pandas"] = stand_in
    try:
        return importlib.import_module("ortools.sat.python.cp_model")
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]


cp_model = _import_cp_model()

__all__ = ["cp_model"]
