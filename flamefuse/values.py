"""Value classes as ``@dataclass`` makes them, without its cost at import (start-up).

``@dataclass(frozen=True)`` writes each class's methods as source text and compiles them
(``exec``): about 0.4 ms per class, 5.8 ms for the fourteen classes a fused ``flamefuse fuse``
run imported before the script's first line (docs/startup.md). :func:`value` gives a class the
same methods without compiling any text: for up to eight fields, copies of templates written
below (a dataclass's own ``__eq__``, ``__hash__`` and ``__repr__`` code, compiled with this
module) whose attribute names and labels ``f0``, ``f1``, ... are replaced by the fields'
(``code.replace``: as fast as the generated methods), else generic functions (``attrgetter``,
about half as fast; no class of flamefuse's has more than eight compared fields but ``Hooks``,
which is not hashed and compared once): ``__eq__`` (the same class
only, then the tuples of the compared fields: NumPy's ``nan`` is equal to itself inside them,
as in a dataclass's), ``__hash__`` (the hash of that tuple; ``None`` for a class that is not
frozen, as a dataclass's), ``__repr__`` (``Name(field=value, ...)``, the class's qualified name,
``...`` for a value met again inside its own repr), ``__match_args__``, and for a frozen class
``__setattr__`` / ``__delattr__`` that raise :class:`FrozenInstanceError` (an
``AttributeError``, with a dataclass's message), and, with ``slots``, ``__getstate__`` /
``__setstate__`` so that pickling and ``copy`` work. Same values, same results: checked against
the dataclasses they replace by ``tests/core/test_values.py``.

The fields are the class's annotated names, in order (the annotations are not evaluated);
``hidden`` names fields left out of the comparison, the hash and the repr (a dataclass's
``field(compare=False, repr=False)``). ``__init__`` is the class's own, written out (the
fields set with ``object.__setattr__``, as a frozen dataclass's does; a dataclass's
``field(init=False)`` is a field it computes): the hot constructors (a recorded operation, a
view) stay as fast as the generated ones. A class without one gets :func:`_generic_init`
(fields by position or by name, defaults from the class body), slower per call, for a class
made once (:class:`flamefuse.lazy.hooks.Hooks`, 17 fields). ``slots`` makes the class again with
``__slots__`` (the defaults leave the class body), as ``@dataclass(slots=True)`` does.

:func:`fields` gives a value class's field names (what ``dataclasses.fields`` lists).
"""
from __future__ import annotations

from _thread import get_ident
from operator import attrgetter

_set = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Assigning to or deleting a field of a frozen value (``dataclasses.FrozenInstanceError``'s
    message)."""


def fields(cls) -> tuple:
    """The field names of the value class ``cls`` (or of a value's class), in order."""
    return cls.__value_fields__


def value(cls=None, /, *, frozen: bool = True, slots: bool = False, hidden: tuple = ()):
    """The class decorator (see the module doc): ``@value`` or ``@value(slots=True, ...)``."""
    def wrap(c):
        return _make(c, frozen, slots, tuple(hidden))
    return wrap if cls is None else wrap(cls)


def _key(names: tuple):
    """A function giving the tuple of ``names``' values of an object."""
    if len(names) > 1:
        return attrgetter(*names)
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


_OWN = ("__eq__", "__hash__", "__repr__", "__setattr__", "__delattr__", "__match_args__",
        "__getstate__", "__setstate__")


def _make(cls, frozen: bool, slots: bool, hidden: tuple):
    names = tuple(cls.__dict__.get("__annotations__", {}))
    mine = sorted(set(_OWN) & set(cls.__dict__))
    if mine or set(hidden) - set(names):
        raise TypeError(f"{cls.__name__}: defines {mine} (made here), or hides names that are "
                        f"not fields: {sorted(set(hidden) - set(names))}")
    shown = tuple(n for n in names if n not in hidden)
    key = _key(shown)
    methods = {}

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    def __hash__(self):
        return hash(key(self))

    if 0 < len(shown) < len(_EQ):       # a dataclass's own code (twice as fast as the above)
        __eq__, __hash__ = _template(_EQ[len(shown)], shown), _template(_HASH[len(shown)], shown)

    heads = tuple(f"{n}=" for n in shown)

    def text(self):
        return self.__class__.__qualname__ + "(" + ", ".join(
            [h + repr(v) for h, v in zip(heads, key(self))]) + ")"

    if 0 < len(shown) < len(_REPR):
        text = _template(_REPR[len(shown)], shown)
    running = set()

    def __repr__(self):             # (the guard of reprlib.recursive_repr, as a dataclass's)
        me = (id(self), get_ident())
        if me in running:
            return "..."
        running.add(me)
        try:
            return text(self)
        finally:
            running.discard(me)
    methods.update(__eq__=__eq__, __repr__=__repr__)

    if "__init__" not in cls.__dict__:
        methods["__init__"] = _generic_init(names, {n: cls.__dict__[n] for n in names if n in cls.__dict__})
    methods["__match_args__"] = _params(methods.get("__init__") or cls.__dict__["__init__"], names)
    methods["__value_fields__"] = names

    if frozen:
        fieldset = frozenset(names)

        def __setattr__(self, name, value):
            if type(self) is made or name in fieldset:
                raise FrozenInstanceError(f"cannot assign to field {name!r}")
            _set(self, name, value)

        def __delattr__(self, name):
            if type(self) is made or name in fieldset:
                raise FrozenInstanceError(f"cannot delete field {name!r}")
            object.__delattr__(self, name)
        methods.update(__hash__=__hash__, __setattr__=__setattr__, __delattr__=__delattr__)
        if slots:
            def __getstate__(self):
                return [getattr(self, n) for n in names]

            def __setstate__(self, state):
                for n, v in zip(names, state):
                    _set(self, n, v)
            methods.update(__getstate__=__getstate__, __setstate__=__setstate__)
    else:
        methods["__hash__"] = None          # compared and not frozen: unhashable, as a dataclass

    for name, fn in methods.items():
        if hasattr(fn, "__code__"):
            fn.__qualname__ = f"{cls.__qualname__}.{name}"
    if slots:
        body = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
        body.update(methods, __slots__=names)
        made = type(cls)(cls.__name__, cls.__bases__, body)
        made.__qualname__ = cls.__qualname__
        return made
    made = cls
    for name, fn in methods.items():
        setattr(cls, name, fn)
    return cls


def _template(fn, shown: tuple):
    """The template ``fn`` (below) with its attribute names ``f0``, ``f1``, ... made ``shown``'s,
    and in its text (a repr's) ``(f0=`` and ``, f1=`` ... made ``(name=``, ``, name=``."""
    code = fn.__code__
    names = tuple(shown[int(n[1:])] if n[0] == "f" and n[1:].isdigit() else n for n in code.co_names)
    texts = {"(f0=": f"({shown[0]}="} | {f", f{i}=": f", {n}=" for i, n in enumerate(shown)}
    consts = tuple(texts.get(c, c) if type(c) is str else c for c in code.co_consts)
    return type(fn)(code.replace(co_names=names, co_consts=consts), fn.__globals__, fn.__name__)


def _params(init, names: tuple) -> tuple:
    """``init``'s parameter names after ``self`` (checked to be fields, in the fields' order)."""
    if getattr(init, "__value_generic__", False):
        return names
    code = init.__code__
    params = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    at = [names.index(p) if p in names else -1 for p in params]
    if -1 in at or at != sorted(at):
        raise TypeError(f"__init__ parameters {params} are not fields {names} in their order")
    return tuple(params[:code.co_argcount - 1])


def _generic_init(names: tuple, defaults: dict):
    """An ``__init__`` taking ``names`` by position or by name, ``defaults`` for those left out."""
    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"__init__() takes {len(names) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"__init__() got an unexpected keyword argument {k!r}")
            if k in given:
                raise TypeError(f"__init__() got multiple values for argument {k!r}")
            given[k] = v
        for n in names:
            if n in given:
                v = given[n]
            elif n in defaults:
                v = defaults[n]
            else:
                raise TypeError(f"__init__() missing 1 required positional argument: {n!r}")
            _set(self, n, v)
    __init__.__value_generic__ = True
    return __init__


# -- the templates of __eq__ and __hash__ for 1 to 8 compared fields: the code a dataclass
# generates for them, with the attribute names f0, f1, ... replaced by the fields' (_template)


def _eq1(self, other):
    if other.__class__ is self.__class__:
        return (self.f0,) == (other.f0,)
    return NotImplemented


def _hash1(self):
    return hash((self.f0,))


def _eq2(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1) == (other.f0, other.f1)
    return NotImplemented


def _hash2(self):
    return hash((self.f0, self.f1))


def _eq3(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1, self.f2) == (other.f0, other.f1, other.f2)
    return NotImplemented


def _hash3(self):
    return hash((self.f0, self.f1, self.f2))


def _eq4(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1, self.f2, self.f3) == (other.f0, other.f1, other.f2, other.f3)
    return NotImplemented


def _hash4(self):
    return hash((self.f0, self.f1, self.f2, self.f3))


def _eq5(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1, self.f2, self.f3, self.f4) == (other.f0, other.f1, other.f2, other.f3, other.f4)
    return NotImplemented


def _hash5(self):
    return hash((self.f0, self.f1, self.f2, self.f3, self.f4))


def _eq6(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1, self.f2, self.f3, self.f4, self.f5) == (other.f0, other.f1, other.f2, other.f3, other.f4, other.f5)
    return NotImplemented


def _hash6(self):
    return hash((self.f0, self.f1, self.f2, self.f3, self.f4, self.f5))


def _eq7(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1, self.f2, self.f3, self.f4, self.f5, self.f6) == (other.f0, other.f1, other.f2, other.f3, other.f4, other.f5, other.f6)
    return NotImplemented


def _hash7(self):
    return hash((self.f0, self.f1, self.f2, self.f3, self.f4, self.f5, self.f6))


def _eq8(self, other):
    if other.__class__ is self.__class__:
        return (self.f0, self.f1, self.f2, self.f3, self.f4, self.f5, self.f6, self.f7) == (other.f0, other.f1, other.f2, other.f3, other.f4, other.f5, other.f6, other.f7)
    return NotImplemented


def _hash8(self):
    return hash((self.f0, self.f1, self.f2, self.f3, self.f4, self.f5, self.f6, self.f7))


_EQ = (None, _eq1, _eq2, _eq3, _eq4, _eq5, _eq6, _eq7, _eq8)
_HASH = (None, _hash1, _hash2, _hash3, _hash4, _hash5, _hash6, _hash7, _hash8)


# the templates of __repr__'s text for 1 to 8 shown fields (a dataclass's; the recursion guard
# around them: _make)


def _repr1(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r})"


def _repr2(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r})"


def _repr3(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r}, f2={self.f2!r})"


def _repr4(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r}, f2={self.f2!r}, f3={self.f3!r})"


def _repr5(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r}, f2={self.f2!r}, f3={self.f3!r}, f4={self.f4!r})"


def _repr6(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r}, f2={self.f2!r}, f3={self.f3!r}, f4={self.f4!r}, f5={self.f5!r})"


def _repr7(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r}, f2={self.f2!r}, f3={self.f3!r}, f4={self.f4!r}, f5={self.f5!r}, f6={self.f6!r})"


def _repr8(self):
    return f"{self.__class__.__qualname__}(f0={self.f0!r}, f1={self.f1!r}, f2={self.f2!r}, f3={self.f3!r}, f4={self.f4!r}, f5={self.f5!r}, f6={self.f6!r}, f7={self.f7!r})"


_REPR = (None, _repr1, _repr2, _repr3, _repr4, _repr5, _repr6, _repr7, _repr8)
