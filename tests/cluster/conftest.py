from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "cluster"


@pytest.fixture(scope="session")
def data():
    return DATA
