import pytest

from flamefuse.loopnest import fuse_program
from flamefuse.loopnest.kernels import KERNELS


@pytest.fixture(scope="session")
def compiled():
    """(kernel name, reorder_float) -> compiled Kernel, built once per session."""
    cache = {}

    def get(name, reorder):
        if (name, reorder) not in cache:
            cache[name, reorder] = fuse_program(KERNELS[name][0](), reorder_float=reorder)
        return cache[name, reorder]
    return get
