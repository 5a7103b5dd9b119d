"""The ``FLAMEFUSE_*`` environment switches: one table, read in one place.

Every switch flamefuse reads is a row of ``TABLE`` (:class:`Switch`: its name, its default,
what it means and when it is read); no other module reads a ``FLAMEFUSE_*`` variable from
``os.environ``. Each read looks at the environment again (so a test that sets a switch with
``monkeypatch.setenv`` is obeyed by the next call); ``when`` says at which moment a module
asks: ``"per call"`` (each time the switch's behaviour is needed) or ``"per recorder"``
(when a :class:`flamefuse.lazy.recorder.Recorder` is made, i.e. once per process or thread
in practice).

``text(name) -> str``: the value, or the default when the variable is unset or empty.
``on(name) -> bool``: the switch is not ``"0"``. ``integer(name) -> int``: the value as an
integer (the default when it is not one). ``markdown() -> str``: the table as Markdown, the
one printed in docs/guide.md (a test keeps the two equal).

Only the standard library is used (imported by the cache code that ``import flamefuse.lazy``
runs before anything heavy).
"""
from __future__ import annotations

import os


class Switch:
    """One switch: its ``name``, ``default``, ``meaning`` and ``when`` it is read. A plain class
    with slots, not a named tuple or a dataclass: this module is imported by every ``flamefuse
    fuse`` process, and ``typing.NamedTuple`` costs its start-up about 0.15 ms to create the
    class, a dataclass the ``dataclasses`` import (docs/startup.md)."""
    __slots__ = ("name", "default", "meaning", "when")

    def __init__(self, name: str, default: str, meaning: str, when: str = "per call"):
        self.name, self.default, self.meaning, self.when = name, default, meaning, when

    def __repr__(self) -> str:
        return f"Switch({self.name!r}, {self.default!r}, {self.meaning!r}, {self.when!r})"


TABLE = (
    Switch("FLAMEFUSE_CACHE_DIR", "",
           "the cache folder; empty: the platform's user cache folder (`platformdirs`), else "
           "`$XDG_CACHE_HOME/flamefuse` or `~/.cache/flamefuse`"),
    Switch("FLAMEFUSE_CACHE", "1", "`0`: no disk cache of any kind (everything is made again in memory)"),
    Switch("FLAMEFUSE_CACHE_MAX", "2G",
           "size cap of the cache folder (`500M`, `2G`; `0`: no cap); least recently used entries go"),
    Switch("FLAMEFUSE_PLAN_CACHE", "1", "`0`: plans of recorded programs are not kept on disk (kind `plans`)"),
    Switch("FLAMEFUSE_DERIVE_CACHE", "1", "`0`: `flamefuse derive` keeps no record on disk (kind `derive`)"),
    Switch("FLAMEFUSE_DERIVE_PROVE", "0",
           "`1`: the block algebra of a derivation is proved by SymPy as well as decided on random numbers "
           "(the exact cross-check; imports SymPy)"),
    Switch("FLAMEFUSE_PRELOAD", "1",
           "`0`: `flamefuse fuse` neither remembers nor preloads a script's kernels (kind `scripts`)"),
    Switch("FLAMEFUSE_NATIVE", "1", "`0`: no native kernel libraries are built or loaded (kind `native`)"),
    Switch("FLAMEFUSE_ADAPT", "1",
           "`0`: adaptive fusion off: `flamefuse fuse` fuses every site, reads and keeps no decisions (kind `adapt`)"),
    Switch("FLAMEFUSE_PROBE", "1",
           "`0`: adaptive fusion's script probe off: a script the model judges paying is not run once as plain "
           "NumPy to compare measured times (`flamefuse.runtime.probe`; a verdict already kept still holds)"),
    Switch("FLAMEFUSE_PROBE_SECONDS", "",
           "`F,N`: the script probe's fused runs measure `F` seconds and its plain runs `N` (a test hook)"),
    Switch("FLAMEFUSE_NUMPY_SIMD", "auto",
           "`auto`: transcendental ufuncs (`exp`, `log`, `tanh`, `arctan2`, ...) on large arrays run as NumPy's "
           "own SIMD call instead of inside fused kernels where a cost model of measured times predicts it "
           "faster (`flamefuse.runtime.simd`); `1`: wherever NumPy has a SIMD loop; `0`: never"),
    Switch("FLAMEFUSE_COMPILE", "background",
           "`background`: a kernel not compiled yet runs as NumPy (its flush eagerly, a linear-algebra chain as "
           "its LAPACK calls) while one detached low-priority process compiles it into the cache, and the "
           "running script uses it once built (`flamefuse.runtime.compiler`); `inline`: compiled in the "
           "script's process before its first use (the test suite's setting)"),
    Switch("FLAMEFUSE_COMPILE_CRASH", "0",
           "`1`: the background compiler process fails at once (a test hook: the script must not notice)"),
    Switch("FLAMEFUSE_LOOPS", "1",
           "`0`: `flamefuse fuse` leaves the script's `for ... in range` loops as written instead of compiling "
           "those that qualify (`flamefuse.loops`)"),
    Switch("FLAMEFUSE_JIT", "1", "`0`: fused kernels run as plain Python (no Numba; tests)"),
    Switch("FLAMEFUSE_PARTITIONER", "greedy", "how recorded operations are grouped into kernels", "per recorder"),
    Switch("FLAMEFUSE_EAGER_BELOW", str(1 << 15),
           "arrays with fewer elements run eagerly through NumPy instead of being recorded", "per recorder"),
)
BY_NAME = {s.name: s for s in TABLE}


def text(name: str) -> str:
    """The switch's value; its default when unset or empty."""
    return os.environ.get(name) or BY_NAME[name].default


def on(name: str) -> bool:
    return text(name) != "0"


def integer(name: str) -> int:
    try:
        return int(text(name))
    except ValueError:
        return int(BY_NAME[name].default)


def markdown() -> str:
    rows = ["| switch | default | read | meaning |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | {f'`{s.default}`' if s.default else '(none)'} | {s.when} | {s.meaning} |"
             for s in TABLE]
    return "\n".join(rows) + "\n"


__all__ = ["BY_NAME", "TABLE", "Switch", "integer", "markdown", "on", "text"]
