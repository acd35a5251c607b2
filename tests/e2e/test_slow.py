"""End to end with slow queries: twenty approved queries run at once (a three-way cross join on
the demo warehouse, stopped by QUERYBOT_QUERY_TIMEOUT_S) while the bot still acks a click, and
each running card says "Running…" until its query ends.

Every question gets the same scripted reply, so the order in which threads reach the model does
not matter.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import REJECT_ACTION
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import (
    SECRET,
    BotProcess,
    audit_events,
    data_dir_with,
    sql_reply,
    write_script,
)
from tests.support.slack_flow import Thread, has_text
from tests.support.slack_payloads import action_request, signed_headers
from tests.support.standin import Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

#: 50,000 order lines cubed: never finishes, so the timeout ends it.
SLOW = """SELECT COUNT(*) AS n
FROM demo.main.order_items AS a
CROSS JOIN demo.main.order_items AS b
CROSS JOIN demo.main.order_items AS c"""
IN_FLIGHT = 20
TIMEOUT_S = 12


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-slow")
    script = write_script(tmp / "script.jsonl", [sql_reply(SLOW, "Counts.")] * (IN_FLIGHT + 1))
    env = {"QUERYBOT_WORKERS": str(IN_FLIGHT + 2), "QUERYBOT_QUERY_TIMEOUT_S": str(TIMEOUT_S)}
    data_dir = data_dir_with(tmp / "data", demo_file)
    with BotProcess(slack=standin, data_dir=data_dir, script=script, env=env) as process:
        yield process


def test_a_click_is_acked_while_twenty_queries_run(bot: BotProcess, standin: SlackStandin) -> None:
    threads = [flow.ask(bot, f"count everything, take {i}") for i in range(IN_FLIGHT + 1)]
    proposals = [flow.proposal(standin, thread) for thread in threads]
    for posted in proposals[:IN_FLIGHT]:
        flow.click(bot, posted, approve=True)
    standin.wait_for(
        lambda: len(audit_events(bot, event="approved")) == IN_FLIGHT or None,
        what="every approval recorded (each query then starts)",
    )

    # Slack waits 3 s for this ack; a 200 with an empty body is the ack (a miss is a 404).
    last = proposals[IN_FLIGHT]
    status, body = bot.post(*signed_click(last, REJECT_ACTION))
    assert (status, body.strip()) == (200, "")
    assert audit_events(bot, event="execution_failed") == [], "the queries were still running"
    flow.wait_message(standin, threads[IN_FLIGHT], has_text("Rejected by"), "the rejection")

    card = flow.wait_message(
        standin,
        threads[0],
        lambda m: m.ts == proposals[0].ts and "Running…" in m.all_text(),
        "the running card",
    )
    assert "Approved by" in card.all_text()
    for thread, posted in zip(threads[:IN_FLIGHT], proposals, strict=False):
        flow.wait_message(
            standin, thread, has_text(f"longer than {TIMEOUT_S} s"), "the timeout", timeout=60
        )
        assert_card_settled(standin, thread, posted)
    assert len(audit_events(bot, event="execution_failed")) == IN_FLIGHT
    assert audit_events(bot, event="executed") == []


def assert_card_settled(standin: SlackStandin, thread: Thread, posted: Posted) -> None:
    """Once its query ended, the card says who approved it and no longer "Running…"."""
    card = next(m for m in standin.thread(thread.channel, thread.ts) if m.ts == posted.ts)
    assert "Approved by" in card.all_text() and "Running…" not in card.all_text()
    assert any("Running…" in str(blocks) for _, blocks in card.history)


def signed_click(posted: Posted, action: str) -> tuple[str, str, dict[str, str]]:
    text, content_type = action_request(payloads.click(posted, action))
    return text, content_type, signed_headers(SECRET, text)
