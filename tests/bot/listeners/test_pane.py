"""The conversation pane: opening the messages tab (agent view) or a thread of the assistant
view offers the warehouse's own questions as suggested prompts; what is asked there is a direct
message like any other. A workspace that refuses prompts still gets its answers."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bot.listeners.listener_app import Bot, assembled
from tests.support import slack_payloads as payloads
from tests.support.slack_payloads import ALICE
from tests.support.standin import SlackStandin

GOLDEN = """
warehouse: demo
questions:
  - {id: a, category: lookup, question: "How many customers do we have?", gold: SELECT 1}
  - {id: b, category: lookup, question: "And last month?", follow_up_of: a, gold: SELECT 1}
  - {id: c, category: unsafe, question: Drop the orders table, expect: decline}
"""


@pytest.fixture
def bot(slack: SlackStandin, tmp_path: Path) -> Iterator[Bot]:
    (tmp_path / "golden").mkdir()
    (tmp_path / "golden" / "demo.yaml").write_text(GOLDEN, encoding="utf-8")
    (tmp_path / "golden" / "other.yaml").write_text(
        GOLDEN.replace("demo", "finance").replace("customers", "invoices"), encoding="utf-8"
    )
    with assembled(slack, tmp_path, golden_dir=tmp_path / "golden") as built:
        built.agent.deps.examples.add(
            "Revenue by region last month?", "SELECT 1", tables=[], columns=[], approved_by="U1"
        )
        yield built


def test_the_messages_tab_offers_examples_then_golden_questions(
    bot: Bot, slack: SlackStandin
) -> None:
    assert bot.event(payloads.home_opened(ALICE, tab="messages")).status == 200
    [sent] = slack.suggested_prompts
    assert sent["channel_id"] == f"D{ALICE[1:]}" and "thread_ts" not in sent  # the agent view
    assert [p["message"] for p in sent["prompts"]] == [
        "Revenue by region last month?",  # approved here
        "How many customers do we have?",  # the demo's golden set; not its follow-up or decline
    ]
    assert "views.publish" not in [c.method for c in slack.calls]  # the Home tab is not this


def test_an_assistant_thread_gets_its_prompts_and_its_questions_answered_in_it(
    bot: Bot, slack: SlackStandin
) -> None:
    root = payloads.new_ts()
    slack.saw(f"D{ALICE[1:]}", root)
    assert bot.event(payloads.assistant_thread_started(ALICE, thread_ts=root)).status == 200
    [sent] = slack.suggested_prompts
    assert sent["thread_ts"] == root
    question = payloads.message(
        f"D{ALICE[1:]}", sent["prompts"][1]["message"], thread_ts=root, channel_type="im"
    )
    bot.event(question)
    assert [ask[1] for ask in bot.agent.asks] == ["How many customers do we have?"]
    assert [m.thread_ts for m in bot.thread(f"D{ALICE[1:]}", root)] != []


def test_a_workspace_without_the_scope_is_told_once_and_still_answered(
    bot: Bot, slack: SlackStandin, caplog: pytest.LogCaptureFixture
) -> None:
    slack.revoke_scope("assistant:write")
    with caplog.at_level(logging.INFO, logger="bot.suggested_prompts"):
        bot.event(payloads.home_opened(ALICE, tab="messages"))
        bot.event(payloads.home_opened(ALICE, tab="messages"))
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "assistant:write" in said[0] and "manifest.yaml" in said[0]
    assert [c.method for c in slack.calls].count("assistant.threads.setSuggestedPrompts") == 1
    bot.event(
        payloads.message(f"D{ALICE[1:]}", "how many orders?", thread_ts=None, channel_type="im")
    )
    assert [ask[1] for ask in bot.agent.asks] == ["how many orders?"]
