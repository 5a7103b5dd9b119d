"""Random well-sized programs, for property tests and solver benchmarks.

:func:`random_program` ``(n, seed)`` returns a :class:`Program` with ``n``
combinators over array parameters ``xs``, ``ys`` and scalar parameter
``n``, mixing ``map`` (one or two inputs of one size), ``fold``,
``filter``, ``gather``, ``generate`` (of length ``n``), ``cross`` (of
parameter-sized arrays only, to keep sizes small) and ``external``.  Every
map takes arrays of one size class, so size inference always accepts it.
All sinks are returned.
"""
from __future__ import annotations

import random

from flamefuse.cluster.program import Builder, Program

KIND_WEIGHTS = {"map": 30, "fold": 18, "filter": 18, "gather": 8, "generate": 5,
                "cross": 4, "external": 4}


def random_program(n: int, seed: int = 0, externals: bool = True) -> Program:
    rng = random.Random(seed)
    b = Builder(arrays=["xs", "ys"], scalars=["n"])
    classes: dict[str, list[str]] = {"param": ["xs", "ys"]}
    scalars = ["n"]
    used: set[str] = set()
    weights = {k: w for k, w in KIND_WEIGHTS.items() if externals or k != "external"}
    kinds, ws = list(weights), list(weights.values())

    def pick_array():
        cls = rng.choice(sorted(classes))
        return cls, rng.choice(classes[cls])

    def some_scalars():
        return rng.sample(scalars, rng.choice([0, 0, 1])) if len(scalars) > 1 else []

    for k in range(n):
        name = f"v{k}"
        kind = rng.choices(kinds, ws)[0]
        cls, a = pick_array()
        ss = [s for s in some_scalars() if s != "n"]
        if kind == "map":
            args = [a] + ([rng.choice(classes[cls])] if rng.random() < 0.4 else [])
            b.map(name, *args, scalars=ss)
            classes[cls].append(name)
        elif kind == "fold":
            args = [a]
            b.fold(name, a, scalars=ss)
            scalars.append(name)
        elif kind == "filter":
            args = [a]
            b.filter(name, a, scalars=ss)
            classes[name] = [name]
        elif kind == "gather":
            icls, idx = pick_array()
            args = [a, idx]
            b.gather(name, a, idx)
            classes[icls].append(name)
        elif kind == "generate":
            args = []
            b.generate(name, "n", scalars=ss)
            classes[name] = [name]
        elif kind == "cross":
            args = [rng.choice(classes["param"]), rng.choice(classes["param"])]
            b.cross(name, *args)
            classes[name] = [name]
        else:
            args = [a]
            outs = [name] + ([f"{name}s"] if rng.random() < 0.5 else [])
            b.external(outs, arrays=args, scalars=ss, scalar_outputs=outs[1:])
            classes[name] = [name]
            scalars.extend(outs[1:])
        used.update(args)
        used.update(ss)
    bound = [o for x in b.bindings for o in x.outputs]
    return b.returns(*[o for o in bound if o not in used]).build()
