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
        assert_clean(standin)


def assert_clean(standin: SlackStandin) -> None:
    refused = [f"{c.method}: {c.answer.get('error')} ({c.detail})" for c in standin.refused]
    assert not refused, f"the bot sent what Slack would refuse: {refused}"
    assert not standin.mrkdwn_problems, f"unescaped mrkdwn: {standin.mrkdwn_problems}"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo warehouse, built once; bots get copies so none rebuilds it."""
    from connectors.demo import ensure_demo

    return ensure_demo(tmp_path_factory.mktemp("demo"))
