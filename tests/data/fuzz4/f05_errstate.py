"""The fourth camp's fuzz program on errstate: one line per probe, its value digest, error
and warnings (tests/lazy/test_fuzz4_programs.py; tests/data/fuzz4/run.sh runs it under
``flamefuse fuse``)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _show import show  # noqa: E402


x = np.linspace(-2, 2, 9)
show("div default", lambda: 1 / x)
def quiet():
    with np.errstate(divide="ignore"):
        return 1 / x
show("div ignore", quiet)
def raising():
    with np.errstate(invalid="raise"):
        return np.sqrt(x)
show("sqrt raise", raising)
def nested():
    with np.errstate(all="ignore"):
        with np.errstate(over="raise"):
            return np.exp(x * 1000)
show("nested", nested)
old = np.seterr(divide="raise")
show("seterr returns", lambda: sorted(old.items()))
show("div raise", lambda: 1 / x)
np.seterr(**old)
show("restored", lambda: np.log(x))
def inner():
    with np.errstate(under="warn"):
        return np.exp(x * -500)
show("underflow warn", inner)
show("0/0", lambda: np.zeros(5) / np.zeros(5))
show("inf-inf", lambda: np.full(5, np.inf) - np.inf)
def call():
    seen = []
    with np.errstate(all="call", call=lambda kind, flag: seen.append(kind)):
        np.log(x)
    return seen
show("call handler", call)
show("geterr", lambda: sorted(np.geterr().items()))
