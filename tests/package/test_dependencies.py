"""pyproject.toml's dependency ranges hold the versions installed (and tested) here.

Numba and llvmlite are pinned to one minor version each: the cache healing
(flamefuse/numba_cache.py) and the native libraries (flamefuse/runtime/native.py)
use Numba's private API, tested only with these.
"""
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

try:
    import tomllib
except ImportError:                     # Python 3.10
    tomllib = pytest.importorskip("tomli")

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _project() -> dict:
    return tomllib.loads(PYPROJECT.read_text())["project"]


def _requirements(optional: bool) -> list[Requirement]:
    project = _project()
    reqs = [Requirement(r) for r in project["dependencies"]]
    if optional:
        reqs += [Requirement(r) for group in project["optional-dependencies"].values() for r in group]
    return reqs


@pytest.mark.parametrize("req", _requirements(optional=False), ids=str)
def test_every_dependency_is_installed_in_its_range(req):
    installed = version(req.name)
    assert req.specifier.contains(installed, prereleases=True), f"{req.name} {installed} is not {req.specifier}"


@pytest.mark.parametrize("req", [r for r in _requirements(optional=True) if r not in _requirements(False)], ids=str)
def test_every_installed_extra_is_in_its_range(req):
    try:
        installed = version(req.name)
    except PackageNotFoundError:
        pytest.skip(f"{req.name} is not installed (an optional extra)")
    assert req.specifier.contains(installed, prereleases=True), f"{req.name} {installed} is not {req.specifier}"


@pytest.mark.parametrize("name", ["numba", "llvmlite"])
def test_numba_and_llvmlite_are_pinned_to_the_tested_minor_version(name):
    (req,) = [r for r in _requirements(False) if r.name == name]
    tested = Version(version(name))
    minor = f"{tested.major}.{tested.minor}"
    assert req.specifier.contains(f"{minor}.0") and req.specifier.contains(f"{minor}.99")
    assert not req.specifier.contains(f"{tested.major}.{tested.minor + 1}.0")
    assert not req.specifier.contains(f"{tested.major}.{tested.minor - 1}.99")


def test_numpy_is_at_least_2_1():
    """The code uses ``reshape(copy=)`` and ``np._core`` (NumPy 2.1)."""
    (req,) = [r for r in _requirements(False) if r.name == "numpy"]
    assert not req.specifier.contains("2.0.2") and req.specifier.contains("2.1.0")
