"""flamefuse.lazy agrees exactly with eager NumPy on random programs, for every partitioner."""
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

import flamefuse.lazy as lazy
from flamefuse.runtime.partition import PARTITIONERS
from runtime_programs import check, programs

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(PARTITIONERS))
def test_random_programs_match_numpy(interpreted, name):
    lazy.configure(partitioner=name)

    @SETTINGS
    @given(programs)
    def inner(spec):
        with warnings.catch_warnings():
            warnings.simplefilter("error", lazy.FallbackWarning)
            check(spec)
    inner()


def test_random_programs_compiled_with_numba():
    """A smaller sample through real Numba kernels (the on-disk cache makes reruns cheap)."""
    lazy.configure(partitioner="greedy", eager_below=0)
    try:
        @settings(max_examples=12, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(programs)
        def inner(spec):
            check(spec)
        inner()
    finally:
        lazy.configure(eager_below=1 << 15)


@pytest.mark.parametrize("eager_below", [1 << 15, 8])
def test_random_programs_eager_paths_match_numpy(interpreted, eager_below):
    """Small computed inputs run in NumPy at once (all of them, or only the row, column and
    0-d operands beside recorded 5x4 arrays): the eager fast paths agree with NumPy too."""
    lazy.configure(eager_below=eager_below)

    @SETTINGS
    @given(programs)
    def inner(spec):
        check(spec)
    inner()
