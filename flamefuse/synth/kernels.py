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
in the cache is imported without searching again. ``NotFused.reason`` is the
search's explanation (:func:`flamefuse.search.explain.explain`) or why no
invariant derives; that answer is kept in the same folder too, as the store entry
``<name>.none`` (plain text: the reason), so a warm run neither searches
nor explains again. Answers are memoised per process.
"""
from __future__ import annotations

from dataclasses import dataclass

from flamefuse.synth.chain import Chain, key
from flamefuse.synth.chain import problem as problem_of

_MEMO: dict = {}


@dataclass(frozen=True)
class Fused:
    chain: Chain
    module: object
    variant: int               # the 1-based number of the invariant the DEFAULT kernel runs
    cached: bool               # the module's source was already in the user cache

    @property
    def kernel(self):
        return self.module.DEFAULT


@dataclass(frozen=True)
class NotFused:
    chain: Chain
    reason: str


def stamp() -> str:
    """The generator's version (the store's stamp of the kind ``synth``)."""
    from flamefuse.store import stamp
    return stamp("synth")


def fused(chain: Chain) -> Fused | NotFused:
    chain = chain.used()
    name = key(chain, stamp())
    if name not in _MEMO:
        _MEMO[name] = _build(chain, name)
    return _MEMO[name]


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
    if source is None or "DEFAULT_NAME" not in source:
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
    module, cached = load_module("synth", name, source)
    return Fused(chain, module, int(module.DEFAULT_NAME.rsplit("_v", 1)[1]), cached)


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
