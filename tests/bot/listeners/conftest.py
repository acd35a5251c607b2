"""The listener tests' `bot`: the app of listener_app.py with default settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bot.listeners.listener_app import Bot, assembled
from tests.support.standin import SlackStandin


@pytest.fixture
def bot(slack: SlackStandin, tmp_path: Path) -> Iterator[Bot]:
    with assembled(slack, tmp_path) as built:
        yield built
