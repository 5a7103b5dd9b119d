"""One random program of tests/runtime/test_stress_differential.py, run by ``python`` and by
``flamefuse fuse``: ``python stress_program.py STEPS.json`` prints every array and every
observation (element reads, reductions, errors) as JSON.

:func:`_run` is the interpreter of the steps (shared with the in-process test, which passes
``numpy`` or ``flamefuse.lazy`` as ``np``).
"""
import copy
import json
import pickle
import sys
import warnings

import numpy

N = 37
VARS = 4


def _run(np, steps):
    """Run ``steps`` with module ``np``: (arrays, observations)."""
    arrays = [np.arange(float(N)) * (k + 1) - 3.0 * k for k in range(VARS)]
    seen = []

    def pick(i):
        return arrays[i % len(arrays)]

    for step in steps:
        kind = step[0]
        try:
            if kind == "binary":
                a, b = pick(step[1]), pick(step[2])
                if a.shape != b.shape:
                    continue
                fn = step[3]
                arrays.append(np.where(a > b, a, b * 0.5) if fn == "where" else getattr(np, fn)(a, b))
            elif kind == "unary":
                a = pick(step[1])
                arrays.append(np.sqrt(np.abs(a)) if step[2] == "sqrt_abs" else
                              -a if step[2] == "negative" else a * 2.5)
            elif kind == "view":
                a = pick(step[1])
                arrays.append(a[::-1] if step[2] == "reverse" else a[1:])
            elif kind == "inplace":
                a, b = pick(step[1]), pick(step[2])
                if step[3] == "shifted":
                    a[1:] += b[:-1] if b.shape == a.shape else 1.0
                elif a.shape == b.shape:
                    if step[3] == "iadd":
                        a += b
                    else:
                        a *= b
            elif kind == "setitem":
                a = pick(step[1])
                if a.ndim == 1:
                    a[step[2] % a.shape[0]] = step[3]
            elif kind == "element":
                a = pick(step[1])
                if a.ndim == 1:
                    seen.append(("element", a[step[2] % a.shape[0]]))
            elif kind == "reduce":
                seen.append((step[2], getattr(pick(step[1]), step[2])()))
            elif kind == "pickle":
                arrays.append(np.asarray(pickle.loads(pickle.dumps(pick(step[1])))))
            elif kind == "deepcopy":
                arrays.append(copy.deepcopy(pick(step[1])))
            elif kind == "shuffle":
                a = pick(step[1])
                if step[3]:
                    np.random.default_rng(step[2]).shuffle(a)
                else:
                    np.random.seed(step[2])
                    np.random.shuffle(a)
            elif kind == "readonly":
                v = pick(step[1])[::1]
                v.setflags(write=False)
                arrays.append(v)
            elif kind == "broadcast":
                a = pick(step[1])
                if a.ndim == 1:
                    arrays.append(np.broadcast_to(a, (2, a.shape[0]))[1])
        except (ValueError, TypeError) as err:
            seen.append(("error", type(err).__name__, str(err)))
    return arrays, seen


def _plain(value):
    """An observation as JSON: errors as they are; numbers as (float, NumPy type name)."""
    if value[0] == "error":
        return list(value)
    scalar = numpy.asarray(value[1])[()]
    return [value[0], float(scalar), type(scalar).__name__]


def main(path):
    warnings.simplefilter("ignore")
    with open(path) as f:
        programs = json.load(f)
    out = []
    for steps in programs:
        arrays, seen = _run(numpy, [tuple(s) for s in steps])
        out.append({"arrays": [numpy.asarray(a).tolist() for a in arrays],
                    "seen": [_plain(s) for s in seen]})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
