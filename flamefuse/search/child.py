"""A search in a child process, which a time limit can always end.

python-constraint's solver is compiled (Cython): between two solutions it can run in C for a
long time without calling back into Python, and an exception raised by a ``SIGALRM`` handler
inside one of its constraint calls can be swallowed by it. A fresh-clone CI run hung 15 minutes
in ``--engine csp --time-limit 0.5`` that way, though the same test passed alone. So
:func:`flamefuse.search.bounded.search` runs the ``csp`` engine, when a time limit is set, in
a child process: the child sends each invariant as it finds it; the parent waits for the next
one no longer than the time left and, when the time is up (or the caller stops early), kills
the child. Nothing the child does can outlive the limit.

``iterate_in_child(engine, problem, deadline)`` yields the invariants the engine finds, in its
order, and raises :class:`TimeoutError` at ``deadline`` (a ``time.perf_counter()`` value).
An error in the child is raised in the parent as a ``RuntimeError`` with the child's message.

The child is ``python -m flamefuse.search.child`` (this file), started with the parent's
interpreter and this flamefuse on its path; the problem goes to it pickled on its standard
input, the invariants come back pickled over a pipe of its own (``multiprocessing``'s
framing). Both ends are this package's own code in the user's own processes.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

ENGINES = {"csp": ("flamefuse.search.csp", "iterate_csp"),
           "brute": ("flamefuse.search.brute", "iterate_brute")}


def iterate_in_child(engine: str, problem, deadline: float):
    """See the module doc."""
    read, write = os.pipe()
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + [p for p in os.environ.get(
        "PYTHONPATH", "").split(os.pathsep) if p]))
    child = subprocess.Popen([sys.executable, "-m", "flamefuse.search.child", engine, str(write)],
                             stdin=subprocess.PIPE, pass_fds=(write,), env=env)
    os.close(write)
    conn = Connection(read)
    try:
        child.stdin.write(pickle.dumps(problem))
        child.stdin.close()
        while True:
            left = deadline - time.perf_counter()
            if left <= 0 or not conn.poll(left):
                raise TimeoutError("the search's time limit")
            try:
                kind, value = conn.recv()
            except EOFError:
                raise RuntimeError(f"the {engine} search's process ended without a result "
                                   f"(exit status {child.wait()})") from None
            if kind == "end":
                return
            if kind == "error":
                raise RuntimeError(value)
            yield value
    finally:
        conn.close()
        if child.poll() is None:
            child.kill()
        child.wait()


def _main(engine: str, fd: int) -> None:
    import importlib
    module, name = ENGINES[engine]
    iterate = getattr(importlib.import_module(module), name)
    problem = pickle.loads(sys.stdin.buffer.read())
    conn = Connection(fd)
    try:
        for inv in iterate(problem):
            conn.send(("found", inv))
    except Exception as err:   # noqa: BLE001  (sent to the parent, which raises it)
        conn.send(("error", f"the {engine} search failed: {type(err).__name__}: {err}"))
        return
    conn.send(("end", None))


if __name__ == "__main__":
    _main(sys.argv[1], int(sys.argv[2]))
