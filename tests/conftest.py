"""Suite-wide settings.

Under CI (``CI=true``, as ``.ci/run`` is run) every hypothesis test is derandomized: its examples
are a fixed function of the test, so CI runs the same cases each time (a new random case in CI
would compile new kernels, and a failure could not be reproduced from the log). A developer's
run keeps hypothesis's random search; ``HYPOTHESIS_PROFILE=ci`` reproduces CI's cases.
"""
import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev"))


# The suite's settings (see _no_disk_plans): set for the whole process at start-up too, so a
# session- or module-scoped fixture, set up before any function-scoped one, runs under them
# (not under the user's defaults: disk plans, native libraries, background compiles).
SUITE_ENV = {"FLAMEFUSE_PLAN_CACHE": "0", "FLAMEFUSE_DERIVE_CACHE": "0", "FLAMEFUSE_PRELOAD": "0",
             "FLAMEFUSE_NATIVE": "0", "FLAMEFUSE_ADAPT": "0", "FLAMEFUSE_COMPILE": "inline"}


def pytest_configure(config):
    os.environ.update(SUITE_ENV)


@pytest.fixture(autouse=True)
def _no_disk_plans(monkeypatch):
    """Plans and per-script kernel lists are not read from or written to the user's disk cache
    (a plan stored by an earlier run would turn "built" counts into "loaded" ones), and kernels
    run through Numba, not native libraries built by earlier runs;
    tests/runtime/test_plan_cache.py, test_preload.py, test_native.py and test_adapt.py turn them
    on with their own folder (adaptive fusion: a script run twice would run as plain NumPy).
    ``flamefuse derive`` derives again in every test (tests/package/test_record.py tests its
    record cache). Kernels compile inline, before their first use (``FLAMEFUSE_COMPILE=inline``):
    tests/runtime/test_background_compile.py tests the background compiler. Each test starts
    from :data:`SUITE_ENV` again, whatever an earlier test or fixture set."""
    for name, value in SUITE_ENV.items():
        monkeypatch.setenv(name, value)
