"""Differential test: CP-SAT, python-constraint and brute force agree on random task lists.

The generator makes PME-like operations whose tasks read their own output
region (initial, earlier or later states of it), ``any`` groups (also over
the own region), regions written by several operations, and a pure input.
"""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flamefuse.pme import AnyOf, Fn, Operation, Problem, State, Task
from flamefuse.search.csp import enumerate_csp
from flamefuse.search.brute import enumerate_brute
from flamefuse.search.enumerate import enumerate_cpsat

REGIONS = ("r0", "r1", "r2", "p0")   # p0 is never written: a pure input


@st.composite
def states(draw, regions=REGIONS):
    region = draw(st.sampled_from(regions))
    kind = draw(st.sampled_from(("hat", "during", "tilde")))
    if kind == "during":
        return State("during", region, draw(st.integers(0, 1)), draw(st.sampled_from((None, "a", "b"))))
    return State(kind, region)


@st.composite
def inputs(draw, earlier, own):
    """An input: mostly an initial state or a state computed earlier in the operation."""
    pool = [State("hat", r) for r in REGIONS] + list(earlier)
    if draw(st.integers(0, 3)) == 0:   # the task's own region, in any of its states
        pool = [State("hat", own.region), State("during", own.region, 0, "a"),
                State("during", own.region, 0, "b"), State("during", own.region, 0)] + list(earlier)
    if draw(st.integers(0, 4)) == 0:
        return AnyOf(tuple(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))))
    if draw(st.integers(0, 6)) == 0:
        return draw(states())
    return draw(st.sampled_from(pool))


@st.composite
def operations(draw, k):
    """PME-like: op tasks first and last, the rest reading what came before (sometimes after)."""
    outs = draw(st.lists(states(REGIONS[:3]).filter(lambda s: s.kind != "hat"),
                         min_size=2, max_size=5, unique=True))
    tasks = []
    for j, out in enumerate(outs):
        kind = "op_eq" if j in (0, len(outs) - 1) else draw(st.sampled_from(("eq", "eq", "op_eq", "comes_from")))
        args = tuple(draw(st.lists(inputs(outs[:j], out), max_size=3)))
        tasks.append(Task(kind, out, Fn("f", args)))
    if draw(st.booleans()):
        order = draw(st.permutations(range(len(tasks))))
        tasks = [tasks[i] for i in order]
    return Operation(f"op{k}", tuple(tasks))


@st.composite
def problems(draw):
    n = draw(st.integers(1, 4))
    return Problem("random", tuple(draw(operations(k)) for k in range(n)))


FOUND = {"some": 0, "none": 0, "own_region_read": 0}


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_three_engines_agree_on_random_task_lists(problem):
    want = enumerate_brute(problem)
    assert enumerate_cpsat(problem) == want
    assert enumerate_csp(problem) == want
    FOUND["some" if want else "none"] += 1
    FOUND["own_region_read"] += any(s.region == t.out.region for op in problem.operations for t in op.tasks
                                    for a in t.expr.args for s in (a.options if isinstance(a, AnyOf) else (a,)))


def test_random_task_lists_were_not_trivial():
    """The differential test saw problems with and without invariants, and own-region reads."""
    if not (FOUND["some"] or FOUND["none"]):
        test_three_engines_agree_on_random_task_lists()
    assert FOUND["some"] > 50 and FOUND["none"] > 50 and FOUND["own_region_read"] > 100, FOUND
