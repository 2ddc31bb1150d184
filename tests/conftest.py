import os
import sys

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis profiles (tests/test_fuzz.py).  "ci", the default: reproducible examples (each test
# sets its fixed count) with a 10 s deadline per example, generous for programs that take
# milliseconds but a catch for anything quadratic.  "long": a time-boxed soak run with fresh
# randomness, selected with `--hypothesis-profile=long` or TENSORCOPY_FUZZ=long (length:
# TENSORCOPY_FUZZ_MINUTES, default 20).
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
            HealthCheck.large_base_example]
settings.register_profile("ci", deadline=10_000, derandomize=True, database=None, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("long", deadline=10_000, print_blob=True, suppress_health_check=_SLOW_OK)
settings.load_profile("long" if os.environ.get("TENSORCOPY_FUZZ") == "long" else "ci")

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
