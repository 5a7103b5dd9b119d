"""SHA-256 without loading OpenSSL: ``sha256(data=b"")``, the same object and digest as
``hashlib.sha256``.

``import hashlib`` loads OpenSSL's ``libcrypto`` (``_hashlib``): about 2 ms of CPU, in every
``flamefuse fuse`` process, for the few short digests a warm run takes (its decisions' and
kernel list's file names, its plan keys). CPython's own SHA-256 (``_sha2`` since 3.12,
``_sha256`` before) gives the same digests with no library to load; where neither exists this
is ``hashlib.sha256``.
"""
from __future__ import annotations

import sys

try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256
    else:
        from _sha256 import sha256
except ImportError:             # a Python built without its own hashes
    from hashlib import sha256

__all__ = ["sha256"]
