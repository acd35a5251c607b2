"""Fixtures for the Slack tests: the Web API stand-in and the prebuilt demo warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from standin import SlackStandin


@pytest.fixture
def slack() -> Iterator[SlackStandin]:
    """A fresh Web API stand-in; fails the test if the bot sent anything Slack would refuse."""
    with SlackStandin() as standin:
        yield standin
        standin.assert_clean()


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo warehouse, built once; each bot gets a copy so none builds it again."""
    from connectors.demo import ensure_demo

    return ensure_demo(tmp_path_factory.mktemp("demo"))
