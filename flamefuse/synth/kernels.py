"""From a chain to a loaded kernel module: search, derivation, code generation, user cache.

``fused(chain) -> Fused | NotFused`` builds the Problem of ``chain``
(:func:`flamefuse.synth.chain.problem`, through the YAML loader's binding functions),
runs the pipeline on it once (:func:`flamefuse.pipeline.synthesize`: search, derivation,
kernel IR), emits the module with :func:`flamefuse.codegen.emit_module` (the code path of
the shipped ``generated/*.py``) and imports it from the user cache folder
``synth`` (:func:`flamefuse.cache.load_module`) under a name keyed by the
chain's structure and the generator's version (:func:`flamefuse.store.stamp` of the kind
``synth``: flamefuse's version and the source of the packages that search, derive and emit,
so a fixed derivation or a new DEFAULT never reuses a module made before). A module already
in the cache is not searched again, nor imported while a native library of its kernel serves
the calls (:mod:`flamefuse.synth.native_chain`: a warm run imports no Numba). ``NotFused.reason`` is the
search's explanation (:func:`flamefuse.search.explain.explain`) or why no
invariant derives; that answer is kept in the same folder too, as the store entry
``<name>.none`` (plain text: the reason), so a warm run neither searches
nor explains again. Answers are memoised per process (by name and by chain).
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.synth.chain import Chain, key
from flamefuse.synth.chain import problem as problem_of

_MEMO: dict = {}


@dataclass(frozen=True)
class Fused:
    chain: Chain
    launch: object             # its DEFAULT kernel (:class:`flamefuse.synth.native_chain.Launch`)
    variant: int               # the 1-based number of the invariant the DEFAULT kernel runs
    cached: bool               # the module's source was already in the user cache

    @property
    def kernel(self):
        """The DEFAULT variant's kernel: its native library where one was built for the
        arguments' types, else the module's Numba wrapper (:mod:`.native_chain`)."""
        return self.launch

    @property
    def module(self):
        """The kernel module, imported (with Numba) now if it was not."""
        return self.launch.imported()


@dataclass(frozen=True)
class NotFused:
    chain: Chain
    reason: str


def stamp() -> str:
    """The generator's version (the store's stamp of the kind ``synth``)."""
    from flamefuse.store import stamp
    return stamp("synth")


def fused(chain: Chain) -> Fused | NotFused:
    """The answer for ``chain``; memoised by the module name and by the chain itself (a frozen,
    hashable value), so a chain met again -- every solve of a loop -- costs a dict look-up, not
    its spec text and digest."""
    memo = _MEMO
    answer = memo.get(chain)
    if answer is None:
        used = chain.used()
        name = key(used, stamp())
        if name not in memo:
            memo[name] = _build(used, name)
        answer = memo[chain] = memo[name]
    return answer


def _cached_text(name: str, suffix: str = ".py") -> str | None:
    from flamefuse.cache import cached_source
    return cached_source("synth", name, suffix)


def _remember(name: str, reason: str) -> None:
    """Keep the answer "no fused loop" (its reason) for the next run; without a usable folder,
    or when it cannot be written, the next run asks again."""
    from flamefuse import store
    store.put("synth", name, reason + "\n", ".none")


def _build(chain: Chain, name: str) -> Fused | NotFused:
    from flamefuse.cache import load_module
    source = _cached_text(name)
    kept = source is not None and "DEFAULT_NAME" in source
    if not kept:
        reason = _cached_text(name, ".none")
        if reason is not None and reason.strip():
            return NotFused(chain, reason.strip())
        try:
            source = _emit(chain)
        except Exception as err:        # noqa: BLE001 -- a generator failure costs fusion, never a result
            return NotFused(chain, f"the generator failed ({type(err).__name__}: {err})")
        if isinstance(source, NotFused):
            _remember(name, source.reason)
            return source
    from flamefuse.synth.native_chain import ChainCode, Launch
    variant = _default_name(source)
    if variant is not None and kept:
        # in the cache already: imported (Numba) only if no native library serves a call
        code = ChainCode(name, variant, source)
        return Fused(chain, Launch(code), int(variant.rsplit("_v", 1)[1]), True)
    module, cached = load_module("synth", name, source)
    code = ChainCode(name, module.DEFAULT_NAME, source)
    return Fused(chain, Launch(code, module), int(module.DEFAULT_NAME.rsplit("_v", 1)[1]), cached)


def _default_name(source: str) -> str | None:
    """The module's ``DEFAULT_NAME`` as its text assigns it (a plain string literal), or None."""
    import re
    found = re.search(r"^DEFAULT_NAME = '([A-Za-z_][A-Za-z0-9_]*)'$", source, re.M)
    return found.group(1) if found else None


def _emit(chain: Chain) -> str | NotFused:
    from flamefuse.codegen import emit_module
    from flamefuse.errors import FlameError
    from flamefuse.pipeline import synthesize
    synthesis = synthesize(problem_of(chain))
    if not synthesis.invariants:
        why = synthesis.why
        return NotFused(chain, why.summary if why else "no fused invariant")
    if not synthesis.made:
        return NotFused(chain, "no invariant derives: " + "; ".join(f"{k}: {v}" for k, v in synthesis.skipped.items()))
    try:
        return emit_module(synthesis)
    except FlameError as err:
        return NotFused(chain, err.diagnostic.message)
