"""This machine's identity: what measured and compiled results are keyed by, read in one place.

``cpu_model() -> str``
    The CPU's model name (the first ``model name`` line of ``/proc/cpuinfo``), else
    ``platform.processor()`` or ``platform.machine()``.
``blas_threads() -> str``
    The BLAS thread setting: ``OPENBLAS_NUM_THREADS``, else ``OMP_NUM_THREADS``, else
    ``"default"`` (read at each call: a benchmark changes it between measurements).
``tuning_key() -> str``
    Where a measured block size holds (:mod:`flamefuse.codegen.tune`'s cache and the committed
    table's ``Machine:`` line): the CPU model, the core count and the BLAS thread setting.
``compiled_key() -> str``
    Where object code compiled here runs (:mod:`flamefuse.runtime.native`'s libraries): the
    CPU's model name and feature flags (the first ``model name`` and ``flags`` lines of
    ``/proc/cpuinfo`` as they are; ``platform.processor()`` and ``platform.machine()`` where it
    cannot be read) and the installed compiler (the paths and modification times of Numba's and
    llvmlite's package files, found without importing them: ``importlib.metadata`` would cost
    90 ms at start-up). Computed once per process.

``/proc/cpuinfo`` is read once per process. The keys' text is part of the caches' keys:
changing it makes every cached block size and native library a miss (rebuilt, never wrong).
"""
from __future__ import annotations

import os

__all__ = ["blas_threads", "compiled_key", "cpu_model", "tuning_key"]

_CPUINFO: list = []
_COMPILED: list = []


def _cpuinfo() -> list[str] | None:
    """The lines of ``/proc/cpuinfo`` (newlines kept), or None where it cannot be read."""
    if not _CPUINFO:
        try:
            with open("/proc/cpuinfo") as f:
                _CPUINFO.append(f.readlines())
        except OSError:
            _CPUINFO.append(None)
    return _CPUINFO[0]


def _platform() -> tuple[str, str]:
    import platform
    return platform.processor(), platform.machine()


def cpu_model() -> str:
    for line in _cpuinfo() or ():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    processor, machine = _platform()
    return processor or machine


def blas_threads() -> str:
    return os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "default"


def tuning_key() -> str:
    return f"{cpu_model()} x{os.cpu_count()} threads={blas_threads()}"


def compiled_key() -> str:
    if not _COMPILED:
        import importlib.util
        lines = _cpuinfo()
        info = ([line for line in lines if line.startswith(("model name", "flags"))][:2] if lines is not None
                else list(_platform()))
        for name in ("numba", "llvmlite"):
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None and spec.origin else ""
            info.append(f"{origin}:{os.stat(origin).st_mtime_ns if origin else 0}")
        _COMPILED.append("|".join(info))
    return _COMPILED[0]
