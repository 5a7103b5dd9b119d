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
``cpu_flags() -> str``
    The CPU's feature flags (the first ``flags`` or ``Features`` line), else "".
``compiled_key() -> str``
    Where object code compiled here runs (the stamp of the store's machine-specific kinds,
    :func:`flamefuse.identity.machine`: native libraries, measured costs): the CPU's model,
    the platform's machine name and a digest of the feature flags. The compiler's versions are
    the store's other part (:func:`flamefuse.identity.versions`).

``/proc/cpuinfo`` is read once per process; no key starts a subprocess where it names the CPU's
model (``platform.processor()`` runs ``uname -p``: a warm ``flamefuse fuse`` paid 10-25 ms for
it). The keys' text is part of the caches' keys: changing it makes every cached block size and
native library a miss (rebuilt, never wrong).
"""
from __future__ import annotations

import os

__all__ = ["blas_threads", "compiled_key", "cpu_flags", "cpu_model", "tuning_key"]

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


def _processor() -> str:
    """``platform.processor()``: on Linux it runs ``uname -p`` in a subprocess (10-25 ms), so it
    is asked only where ``/proc/cpuinfo`` names no model."""
    import platform
    return platform.processor()


def _machine() -> str:
    """The platform's machine name (``x86_64``): ``os.uname()`` where there is one (what
    ``platform.machine()`` reads there, without importing ``platform``)."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform
    return platform.machine()


def cpu_model() -> str:
    for line in _cpuinfo() or ():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return _processor() or _machine()


def blas_threads() -> str:
    return os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "default"


def tuning_key() -> str:
    return f"{cpu_model()} x{os.cpu_count()} threads={blas_threads()}"


def cpu_flags() -> str:
    for line in _cpuinfo() or ():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return value.strip()
    return ""


def compiled_key() -> str:
    if not _COMPILED:
        from flamefuse.digest import sha256
        digest = sha256(cpu_flags().encode()).hexdigest()[:12]
        _COMPILED.append(f"{cpu_model() or 'unknown CPU'} ({_machine()}, flags {digest})")
    return _COMPILED[0]
