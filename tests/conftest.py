"""Suite-wide settings."""
import pytest


@pytest.fixture(autouse=True)
def _no_disk_plans(monkeypatch):
    """Plans are not read from or written to the user's disk cache (a plan stored by an earlier
    run would turn "built" counts into "loaded" ones); tests/runtime/test_plan_cache.py turns it
    on with its own folder."""
    monkeypatch.setenv("FLAMEFUSE_PLAN_CACHE", "0")
