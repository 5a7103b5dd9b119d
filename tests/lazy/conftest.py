import warnings

import pytest


@pytest.fixture(autouse=True)
def _quiet_numba():
    from numba.core.errors import NumbaPerformanceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        yield


