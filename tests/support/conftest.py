"""Fixtures of the stand-ins' own tests: a fresh Slack Web API stand-in, and slack_sdk's real
WebClient pointed at it (the bot's own client, so the stand-in is checked as the bot meets it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from tests.support.standin import SlackStandin


@pytest.fixture
def standin() -> Iterator[SlackStandin]:
    with SlackStandin() as slack:
        yield slack


@pytest.fixture
def client(standin: SlackStandin) -> WebClient:
    return WebClient(token="xoxb-test", base_url=standin.url)
