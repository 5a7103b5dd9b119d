"""A second, independent engine on python-constraint, for cross-checking CP-SAT.

Built directly from the rules (docs: invariant search) with plain Python
predicates over small variable sets; it enumerates every (x, C, U)
assignment and projects onto the task indicators x.  Exponential in the
number of regions: meant for tests and small problems, not for production.
"""
from __future__ import annotations

from constraint import Problem as CspProblem

from flamefuse.pme.model import AnyOf, Problem, inputs, input_states, mentions, pr, with_const_tasks
from flamefuse.search.solutions import Invariant, sort_key


def _xname(i: int, k: int) -> str:
    return f"x_{i}_{k}"


def _dset(tasks, inp, test) -> list[list[int]]:
    """One list of task indices per branch of an input (a base state has one branch)."""
    states = inp.options if isinstance(inp, AnyOf) else (inp,)
    return [[k for k, t in enumerate(tasks) if test(t.out, s)] for s in states]


def _read_regions(task) -> list[tuple[str, ...]]:
    """Rule 6 inputs: a region (or an any's regions) per input, the output's own region included."""
    return sorted({tuple(sorted({s.region for s in input_states(inp)})) for inp in inputs(task)})


def enumerate_csp(problem: Problem) -> list[Invariant]:
    """All distinct fused invariants, found by python-constraint."""
    sizes = [len(op.tasks) for op in with_const_tasks(problem).operations]
    return sorted(set(iterate_csp(problem)), key=lambda inv: sort_key(inv, sizes))


def iterate_csp(problem: Problem):
    """The fused invariants of ``problem`` (without const tasks: they are added here) as
    python-constraint finds them (repeats possible), one at a time."""
    problem = with_const_tasks(problem)
    ops = problem.operations
    n = len(ops)
    csp = CspProblem()
    for i, op in enumerate(ops):
        for k in range(len(op.tasks)):
            csp.addVariable(_xname(i, k), [0, 1])
    regions = sorted({t.out.region for op in ops for t in op.tasks}
                     | {s.region for op in ops for t in op.tasks for inp in inputs(t) for s in input_states(inp)})
    for r in regions:
        csp.addVariable(f"C_{r}", list(range(-1, n)))
        csp.addVariable(f"U_{r}", list(range(0, n + 1)))

    def add(names, pred):
        names = list(dict.fromkeys(names))
        csp.addConstraint(lambda *vals, names=names: pred(dict(zip(names, vals))), names)

    for i, op in enumerate(ops):
        tasks = op.tasks
        xs = lambda ks, i=i: [_xname(i, k) for k in ks]
        for k, t in enumerate(tasks):
            me = _xname(i, k)
            if t.kind == "const":
                users = [j for j, u in enumerate(tasks) if u.kind != "const" and mentions(u, t.out.region)]
                add([me] + xs(users), lambda v, me=me, us=xs(users): v[me] == int(any(v[u] for u in us)))
                continue
            for inp in inputs(t):
                past = _dset(tasks, inp, lambda o, s: o == s or pr(o, s))
                future = _dset(tasks, inp, lambda o, s: pr(s, o))
                flat = [j for br in past + future for j in br]
                add([me] + xs(flat), lambda v, me=me, past=past, future=future, i=i: (
                    (not v[me] or any(all(v[_xname(i, j)] for j in br) for br in past)) and
                    (v[me] or any(all(not v[_xname(i, j)] for j in br) for br in future))))
            if t.kind == "comes_from":
                sets = [_dset(tasks, inp, lambda o, s: o == s or pr(o, s)) for inp in inputs(t)]
                flat = [j for s in sets for br in s for j in br]
                add([me] + xs(flat), lambda v, me=me, sets=sets, i=i: v[me] or not all(
                    any(all(v[_xname(i, j)] for j in br) for br in s) for s in sets))
            for grp in _read_regions(t):
                add([me] + [f"C_{r}" for r in grp] + [f"U_{r}" for r in grp],
                    lambda v, me=me, grp=grp, i=i: (
                        any(v[f"C_{r}"] >= i - 1 for r in grp) if v[me] else any(v[f"U_{r}"] <= i + 1 for r in grp)))
        ops_eq = [k for k, t in enumerate(tasks) if t.kind == "op_eq"]
        add(xs(ops_eq), lambda v, names=xs(ops_eq): any(v[a] for a in names) and not all(v[a] for a in names))
        for r in {t.out.region for t in tasks}:
            mine = xs([k for k, t in enumerate(tasks) if t.out.region == r])
            add(mine + [f"C_{r}", f"U_{r}"], lambda v, mine=mine, r=r, i=i: (
                (v[f"C_{r}"] >= i) == all(v[a] for a in mine) and
                (v[f"U_{r}"] <= i) == (not any(v[a] for a in mine))))
    for sol in csp.getSolutionIter():
        yield Invariant(tuple(tuple(k for k in range(len(op.tasks)) if sol[_xname(i, k)])
                              for i, op in enumerate(ops)))
