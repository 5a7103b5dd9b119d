import os
import warnings

import pytest


@pytest.fixture(scope="session", autouse=True)
def _synth_cache(request, tmp_path_factory):
    """One user cache folder (pytest's cache folder, so synthesized kernels compile once across
    runs; a temporary one without it), and every call recorded from 100 elements up so the
    matrices stay small."""
    import flamefuse.lazy as lazy
    saved = os.environ.get("FLAMEFUSE_CACHE_DIR")
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("flamefuse-synth") if cache is not None else tmp_path_factory.mktemp("synth-cache")
    os.environ["FLAMEFUSE_CACHE_DIR"] = str(folder)
    from flamefuse.cache import _usable
    _usable.cache_clear()
    lazy.configure(eager_below=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    lazy.configure(eager_below=1 << 15)
    if saved is None:
        os.environ.pop("FLAMEFUSE_CACHE_DIR", None)
    else:
        os.environ["FLAMEFUSE_CACHE_DIR"] = saved
    _usable.cache_clear()
