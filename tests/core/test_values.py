"""flamefuse.values: the runtime's value classes behave as the dataclasses they replaced.

Each class is checked against a reference: the ``@dataclass`` it was (its former form, made here
with ``dataclasses.make_dataclass``): equality (field by field, the same class only, ``nan``
equal to itself inside a value), hashes (the same number in one process), ``repr`` (the text of
a product group's plan key), frozen fields, ``__match_args__``, pickling and ``copy``.
"""
import copy
import dataclasses
import math
import pickle

import numpy
import pytest

from flamefuse import values
from flamefuse.lazy.hooks import Hooks
from flamefuse.runtime.code import Code
from flamefuse.runtime.execute import Plan, Step
from flamefuse.runtime.graph import Graph
from flamefuse.runtime.kernel import Grid, Index, Kernel
from flamefuse.runtime.program import BaseInfo, Op, Program, Ref, Scalar
from flamefuse.runtime.views import View

F = dataclasses.field
HIDDEN = F(default=None, compare=False, repr=False)

# class, its former fields (name, default or dataclasses.field), dataclass options, sample
# arguments (two values per field: the first makes the sample, the second differs)
V0, V1 = View(0, (3,), (1,)), View(1, (3,), (2,), (1,))
CODE0 = Code(("n0",), True, "n0", 256, (), ("a",), ())
CASES = [
    (View, ["offset", "shape", "strides", ("wrap", ())], dict(slots=True),
     [(0, 5), ((3,), (4,)), ((1,), (2,)), ((), (1,))]),
    (Ref, ["base", "view"], dict(slots=True), [(0, 1), (V0, V1)]),
    (Scalar, ["index", "dtype"], dict(slots=True), [(0, 1), ("float64", "int64")]),
    (Op, ["kind", "name", "out", "ins", "shape", "loop", ("axis", None)], dict(slots=True),
     [("ew", "reduce"), ("add", "sum"), (Ref(0, V0), Ref(1, V0)), ((Scalar(0, "f"),), ()),
      ((3,), (4,)), (("f", "f"), ("i", "i")), (None, 0)]),
    (BaseInfo, ["dtype", "size", "fresh", "dead"], dict(slots=True),
     [("float64", "int8"), (3, 4), (True, False), (False, True)]),
    (Program, ["ops", "bases"], dict(slots=True), [((), (1,)), ((), (2,))]),
    (Graph, ["n", "succ", "forbidden", "resources", "weight", "contract", ("shapes", ())], {},
     [(1, 2), ((), (frozenset(),)), (frozenset(), frozenset({1})), ((), (1,)), ({}, {1: 2}),
      ({}, {3: 4}), ((), ((1,),))]),
    (Kernel, ["code", "args"], {}, [(CODE0, None), ((), (1,))]),
    (Grid, ["base", "shape"], {}, [(0, 1), ((3,), (4,))]),
    (Index, ["slot", "value"], {}, [((), ("x",)), (3, 4)]),
    (Code, ["params", "parallel", "extent", "most", "buffers", "chunk", "combine"], {},
     [(("n0",), ("n1",)), (True, False), ("n0", None), (256, 1), ((), (("b", "f", 1),)),
      (("a",), ("b",)), ((), ("c",))]),
    (Plan, ["steps", "gone", "cost", ("allocs", ()), ("frees", ()), ("divisors", HIDDEN)], {},
     [((), (1,)), (frozenset(), frozenset({1})), (3, 4), ((), (1,)), ((), (2,)), ([], [9])]),
]


def _reference(cls, spec, options):
    """The dataclass ``cls`` was (its former definition)."""
    made = []
    for item in spec:
        if isinstance(item, str):
            made.append((item, object))
        else:
            name, default = item
            made.append((name, object, default if isinstance(default, dataclasses.Field)
                         else F(default=default)))
    return dataclasses.make_dataclass(cls.__name__, made, frozen=True, **options)


@pytest.mark.parametrize("cls, spec, options, samples", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_value_class_behaves_as_its_former_dataclass(cls, spec, options, samples):
    ref = _reference(cls, spec, options)
    first = [s[0] for s in samples]
    new, old = cls(*first), ref(*first)
    assert values.fields(cls) == tuple(f.name for f in dataclasses.fields(ref))
    assert cls.__match_args__ == ref.__match_args__
    assert repr(new) == repr(old)
    assert new == cls(*first) and not new != cls(*first)
    if any(isinstance(v, dict) for v in first):      # a dict field: unhashable, both
        for obj in (new, old):
            with pytest.raises(TypeError, match="unhashable type: 'dict'"):
                hash(obj)
    else:
        assert hash(new) == hash(old)
    assert (new == old) is False and new.__eq__(old) is NotImplemented   # another class
    for k, (f, (a, b)) in enumerate(zip(dataclasses.fields(ref), samples)):
        other = list(first)
        other[k] = b
        assert (new == cls(*other)) == (old == ref(*other)), f.name
        assert repr(cls(*other)) == repr(ref(*other)), f.name
        for obj in (new, old):
            with pytest.raises(AttributeError) as err:
                setattr(obj, f.name, b)
            assert str(err.value) == f"cannot assign to field {f.name!r}"
            with pytest.raises(AttributeError) as err:
                delattr(obj, f.name)
            assert str(err.value) == f"cannot delete field {f.name!r}"
    assert isinstance(values.FrozenInstanceError("x"), AttributeError)
    for same in (copy.copy(new), copy.deepcopy(new), pickle.loads(pickle.dumps(new))):
        assert type(same) is cls and same == new and repr(same) == repr(new)
    assert hasattr(new, "__dict__") == hasattr(old, "__dict__")     # slots as the dataclass had


def test_nan_inside_a_value_is_equal_to_itself_as_in_a_dataclass():
    nan = math.nan
    ref = dataclasses.make_dataclass("Index", ["slot", "value"], frozen=True)
    assert (Index((), nan) == Index((), nan)) == (ref((), nan) == ref((), nan)) is True
    assert (Index((), nan) == Index((), float("nan"))) == (ref((), nan) == ref((), float("nan"))) is False


def test_a_step_computes_its_binds_and_leaves_its_entry_out():
    args = (Grid(0, (3,)), Index((), 7), Scalar(1, "float64"))
    a, b = Step(CODE0, args), Step(CODE0, args)
    assert a.binds == ((0, 0, None), (2, numpy.uint64(7), None), (3, 1, numpy.float64))
    assert a.entry == [] and a.entry is not b.entry
    b.entry.append(print)
    assert a == b and hash(a) == hash(b)
    assert repr(a) == f"Step(code={CODE0!r}, args={args!r}, binds={a.binds!r})"
    assert Step.__match_args__ == ("code", "args")


def test_a_plan_gets_a_list_of_divisors_of_its_own():
    a, b = Plan((), frozenset(), 0), Plan((), frozenset(), 0)
    assert a.divisors == [] and a.divisors is not b.divisors
    b.divisors.append(3)
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    assert Plan((), frozenset(), 0, divisors=[1]).divisors == [1]


def test_code_keeps_its_source_and_plain_form():
    c = Code(("n0", "a1"), True, "n0", 256, (("b", "float64", 1),), ("a1[0] = 1",), ())
    assert Code.of(c.plain()) == c and c.plain() == tuple(getattr(c, n) for n in values.fields(Code))
    assert c.source is c.source and "def kernel(n0, a1):" in c.source


def test_hooks_compare_by_value_and_are_not_hashable():
    ref = dataclasses.make_dataclass("Hooks", [("x", object, 1)])
    a, b = Hooks(), Hooks()
    assert a == b and Hooks.__hash__ is None and ref.__hash__ is None
    a.select = print
    assert a != b and a.select is print
    with pytest.raises(TypeError):
        Hooks(select=1, selekt=2)
    with pytest.raises(AttributeError):
        a.other = 1             # slots: no other attribute


def test_a_class_that_defines_what_values_makes_is_refused():
    with pytest.raises(TypeError, match="__eq__"):
        @values.value
        class Bad:
            x: int

            def __init__(self, x):
                object.__setattr__(self, "x", x)

            def __eq__(self, other):
                return True
    with pytest.raises(TypeError, match="not fields"):
        @values.value
        class Wrong:
            x: int

            def __init__(self, y):
                object.__setattr__(self, "x", y)


def test_more_fields_than_the_templates_compare_the_same():
    @values.value
    class Nine:
        a: int
        b: int
        c: int
        d: int
        e: int
        f: int
        g: int
        h: int
        i: int
    ref = dataclasses.make_dataclass("Nine", list("abcdefghi"), frozen=True)
    xs = list(range(9))
    assert Nine(*xs) == Nine(*xs) and hash(Nine(*xs)) == hash(ref(*xs))
    assert repr(Nine(*xs)).endswith("<locals>." + repr(ref(*xs)))      # (a local class's name)
    assert Nine(*xs) != Nine(*xs[:8], 0) and Nine(*xs) == Nine(**dict(zip("abcdefghi", xs)))
