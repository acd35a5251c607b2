"""What to do when something a test needs (a server, a jar, the shared corpora) is missing.

On a developer's machine the test is skipped with the reason; under CI (`CI=true`, which `.ci/run`
sets) it fails, so a missing service can never pass unnoticed.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """True under CI (`CI=true`, any case)."""
    return os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip with `reason`; fail instead under CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: tests that need it fail instead of skipping)")
    pytest.skip(reason)
