"""Code generation: derived fused loops -> a Python module of Numba kernels.

``emit_module(synthesis) -> str``
    The module source for a problem's :class:`flamefuse.pipeline.Synthesis` (its fused
    invariants in the search's order, their derived loops and kernel IR).  The
    invariant numbered k (1-based) becomes ``<spec>_v<k>``; each derivable one
    gives an in-place ``@numba.njit(cache=True)`` kernel ``_k_<spec>_v<k>``
    with its invariant and loop body in FLAME notation in the docstring, and a
    checked wrapper ``<spec>_v<k>(*operands, block_size=None) -> info``
    (operands in spec order; TypeError / ValueError for a wrong type, dtype,
    shape, order or overlap; info > 0 like LAPACK for a failed factorization
    or singular block).  The module also defines ``VARIANTS`` (name ->
    wrapper), ``DEFAULT`` (the variant measured fastest by ``flamefuse bench
    variants SPEC --write``, recorded in :mod:`flamefuse.codegen.variants`;
    without a record, the derivable invariant with the most past tasks),
    ``DEFAULT_NAME``, ``NOT_DERIVED`` (name -> reason) and
    ``block_size_for(n)``, the block size used when ``block_size`` is None
    (the spec's tuned table, ``_BLOCK_STEPS``, from
    :mod:`flamefuse.codegen.block_sizes`).  It imports only numpy, numba,
    scipy and the standard library, and the text is deterministic.  Raises
    :class:`flamefuse.errors.FlameError` when no invariant can be derived, or
    when the problem's name is one the module uses itself (``np``, ``range``,
    a prelude function: ``check_free_name``).
``write_module(synthesis, out_dir) -> Path``
    Writes ``out_dir/<spec name>.py`` atomically (temporary file + rename);
    an identical existing file is left untouched.
``load_generated(path) -> module``
    Imports a generated module under its file's stem (``spd_inverse``) and
    registers it in ``sys.modules``.  Any other way works as well (a package
    import, a plug-in loader's ``spec_from_file_location``, a copy elsewhere):
    the module registers itself for Numba's cache loader.

Writing every shipped spec's module (``generated/``) is :func:`flamefuse.pipeline.regenerate_all`.

Every module starts with the same fixed part, :func:`flamefuse.codegen.prelude.prelude`:
the source of the real modules :mod:`flamefuse.blas_call` (a kernel's call without
Numba: checks, work arrays, BLAS threads), :mod:`~flamefuse.codegen.numba_blas` (BLAS/LAPACK
from Numba), :mod:`~flamefuse.codegen.wrappers` (the SciPy-style call)
and of what they import from :mod:`flamefuse.numba_cache` and
:mod:`flamefuse.trust`, copied by :mod:`flamefuse.codegen.embed`: a generated
module stays standalone (the prelude's docstring says why) and nothing is
written twice.  The kernel IR (:mod:`flamefuse.codegen.ir`) is target-independent; the Numba
target (:mod:`flamefuse.codegen.numba_target`) is the only one so far.
:mod:`flamefuse.codegen.tune` picks a block size per n by a short timing run,
cached per machine (``flamefuse bench kernels`` uses it), and measures the
committed per-spec tables (``flamefuse bench blocksize --write``) that the
modules' default ``block_size=None`` follows. :mod:`flamefuse.codegen.demo` runs the
generated SPD inverse against LAPACK (``python -m flamefuse.codegen.demo [n]``).
"""
from __future__ import annotations

import sys
from pathlib import Path

from flamefuse.codegen import scipy_style, tune
from flamefuse.codegen.numba_target import docstring_text, render_kernel
from flamefuse.codegen.prelude import names, prelude
from flamefuse.codegen.variants import FASTEST
from flamefuse.errors import fail
from flamefuse.files import import_file, write_text_atomic
from flamefuse.pme.model import Problem


# the names a generated module binds besides the prelude's and the kernels'
MODULE_NAMES = frozenset({"VARIANTS", "DEFAULT", "DEFAULT_NAME", "NOT_DERIVED", "block_size_for", "_BLOCK_STEPS",
                          "_OPERANDS", "_RESULTS", "_RETURNS_PIV", "_ON_INFO"})


def check_free_name(problem: Problem) -> None:
    """The SciPy-style function is named after the problem: a name the module uses for something
    else (``np``, ``range``, ``folder_problem``, ``VARIANTS`` ...) would replace that thing."""
    import builtins
    if problem.name in names() | MODULE_NAMES or hasattr(builtins, problem.name):
        fail(f"no code for {problem.name}: the generated module uses the name {problem.name!r} itself "
             "(a module-level or built-in name), and its SciPy-style function would replace it",
             file=problem.source, hint="rename the spec (its `name:`), e.g. " + f"{problem.name}_kernel")


def emit_module(synthesis) -> str:
    problem, made, skipped = synthesis.problem, synthesis.made, synthesis.skipped
    check_free_name(problem)
    if not made:
        reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items()) or "the problem has no fused invariant"
        fail(f"no code for {problem.name}: no invariant can be derived ({reasons})",
             file=problem.source, hint="`flamefuse derive` lists the invariants and why each is skipped")
    default, how = default_variant(problem.name, made, shipped(problem))
    doc = [f'"""Generated by flamefuse from the spec {problem.name!r}. Do not edit: regenerate.', ""]
    if problem.description:
        doc += [docstring_text(problem.description.strip()), ""]
    doc += ["Variants (call with the operands in spec order: "
            + ", ".join(o.name for o in problem.operands) + "; keyword block_size):", ""]
    doc += [f"* {name}" + (" (DEFAULT)" if name == default else "") for name, _, _ in made]
    doc += ["", f"DEFAULT is {default}: {how}."]
    if skipped:
        doc += ["", "Not derived:", ""] + [f"* {name}: {docstring_text(why)}" for name, why in skipped.items()]
    doc += ['"""']
    parts = ["\n".join(doc), prelude().strip("\n"), "", "", block_steps(problem.name), "", ""]
    parts += [render_kernel(k) for _, _, k in made]
    parts += ["VARIANTS = {" + ", ".join(f"{n!r}: {n}" for n, _, _ in made) + "}",
              f"DEFAULT = {default}", f"DEFAULT_NAME = {default!r}",
              "NOT_DERIVED = {" + ", ".join(f"{n!r}: {w!r}" for n, w in skipped.items()) + "}", "", "",
              scipy_style.render(problem)]
    return "\n".join(parts)


def shipped(problem: Problem) -> bool:
    """Is ``problem`` loaded from ``specs/<name>.yaml`` (a spec whose variants were measured)? A
    spec built elsewhere with the same name (a run-time chain, a user's file) is another problem."""
    src = Path(str(problem.source or ""))
    return src.parent.name == "specs" and src.name == f"{problem.name}.yaml"


def default_variant(spec: str, made, measured: bool = True) -> tuple[str, str]:
    """The DEFAULT variant and how it was chosen: measured fastest (codegen/variants.py, only for
    ``measured`` specs: the shipped ones) or most past tasks."""
    name, how = FASTEST.get(spec, (None, "")) if measured else (None, "")
    if name in {m[0] for m in made}:
        return name, f"measured fastest by `flamefuse bench variants {spec}` ({how})"
    return max(made, key=lambda m: m[1])[0], "the variant with the most past tasks (no measurement recorded)"


def block_steps(name: str) -> str:
    """The module's ``_BLOCK_STEPS`` (largest n, block size, serial BLAS: the spec's tuned table)
    and ``block_size_for(n)``, which reads it."""
    return "\n".join([
        f"# measured for {name!r} (flamefuse/codegen/block_sizes.py): (up to n, block size, serial BLAS)",
        f"_BLOCK_STEPS = {tune.steps(tune.table_for(name))!r}", "", "",
        "def block_size_for(n):",
        '    """The block size used at dimension ``n`` when none is given: the tuned one of',
        '    the measured n nearest in log scale (``_BLOCK_STEPS``: (up to n, block size, serial))."""',
        "    return _block_size(n, _BLOCK_STEPS)"])


def write_module(synthesis, out_dir) -> Path:
    """Write ``out_dir/<name>.py`` (:func:`emit_module`): only for a name that is a Python
    identifier (so the file stays in ``out_dir``) and a text that compiles (checked before
    anything is written)."""
    problem = synthesis.problem
    target = output_path(out_dir, problem.name, ".py", problem.source)
    text = emit_module(synthesis)
    try:
        compile(text, str(target), "exec")
    except (SyntaxError, ValueError) as err:
        fail(f"internal error: the module generated for {problem.name} does not compile ({err})",
             file=problem.source, hint="please report this spec; nothing was written")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and target.read_text() == text:
            return target                # unchanged: keep the file (and Numba's cache of it)
        return write_text_atomic(target, text)
    except OSError as err:
        fail(f"cannot write {target}: {err.strerror or err}", hint="choose a folder you can write (--emit DIR)")


def output_path(out_dir, name: str, suffix: str, source=None) -> Path:
    """``out_dir/<name><suffix>`` for a ``name`` that is a non-keyword Python identifier (it cannot
    leave ``out_dir``); else a FlameError naming ``source``."""
    from flamefuse.spec.load import check_name
    check_name(name, file=source, what="the problem's name (a YAML spec's name, else the file name)")
    out = Path(out_dir)
    target = out / f"{name}{suffix}"
    if target.parent != out:
        fail(f"the output {target} would leave {out}", file=source)
    return target


def load_generated(path):
    path = Path(path)
    if path.stem in sys.modules and getattr(sys.modules[path.stem], "__file__", None) == str(path.resolve()):
        return sys.modules[path.stem]
    return import_file(path.resolve(), path.stem)


__all__ = ["emit_module", "load_generated", "write_module"]
