"""The suite's hypothesis profile (tests/conftest.py): CI runs fixed examples."""
import os

from hypothesis import given, settings, strategies as st

SEEN: list = []


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("HYPOTHESIS_PROFILE") == "ci"


def test_profile_matches_environment():
    assert settings.default.derandomize is _ci()
    assert settings.get_profile("ci").derandomize is True


def test_ci_profile_repeats_its_examples():
    """Under the ci profile, two runs of one test draw the same examples."""
    @settings(settings.get_profile("ci"), max_examples=5, database=None)
    @given(st.integers())
    def draw(x):
        SEEN.append(x)

    draw()
    first = list(SEEN)
    SEEN.clear()
    draw()
    assert SEEN == first
