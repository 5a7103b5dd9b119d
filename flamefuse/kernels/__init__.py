"""The generated kernel modules, one per shipped spec: ``from flamefuse.kernels import spd_inverse``.

Each module (``flamefuse derive SPEC --emit DIR`` writes one) holds an in-place
Numba kernel per derivable invariant, ``VARIANTS``, ``DEFAULT`` and the
SciPy-style function named after its spec (``spd_inverse.spd_inverse(A)``).
Their home in the repository is ``generated/``: a wheel carries them in this
folder (copied by the build step in ``setup.py``); in a checkout this
package's search path is the repository's ``generated/`` folder, so both import
the same modules under the same names.
"""
from pathlib import Path as _Path

_here = _Path(__file__).resolve().parent
_home = _here.parent.parent / "generated"
if not any(p.name != "__init__.py" for p in _here.glob("*.py")) and _home.is_dir():
    __path__.append(str(_home))     # a checkout: the modules stay in generated/
del _Path, _here, _home
