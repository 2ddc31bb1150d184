import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
BIN = os.path.dirname(sys.executable)


def tool(name: str) -> str:
    """Path of a console script installed beside the running interpreter."""
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else name


@pytest.fixture
def root():
    return ROOT
