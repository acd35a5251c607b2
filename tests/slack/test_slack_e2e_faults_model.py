"""End to end, the model failing under the real bot: a rate limit that passes (retried with
backoff, the question is answered), a quota exhausted for good (a clear message after the bounded
retries), and a bad key (a clear message at once, no retry). Each thread goes on afterwards.

One bot process serves the module; the tests run in file order, each using the scripted model
lines listed for it in SCRIPT (an error line carries the HTTP status a provider would answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import slack_flow as flow
from botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from slack_flow import has_text
from standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

COUNT = "SELECT COUNT(*) AS customers FROM demo.main.customers"
QUOTA = {"__error__": "Resource has been exhausted (e.g. check quota).", "status": 429}
BAD_KEY = {"__error__": "API key not valid. Please pass a valid API key.", "status": 401}

SCRIPT: list[dict | str] = [
    # a rate limit that passes after two retries
    QUOTA,
    QUOTA,
    sql_reply(COUNT, "Counts customers."),
    # a quota exhausted for good, then a later question
    QUOTA,
    QUOTA,
    QUOTA,
    sql_reply(COUNT, "Counts customers."),
    # a bad key, then a later question (the key was fixed)
    BAD_KEY,
    sql_reply(COUNT, "Counts customers."),
]


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-model-faults")
    script = write_script(tmp / "script.jsonl", SCRIPT)
    with BotProcess(
        slack=standin, data_dir=data_dir_with(tmp / "data", demo_db), script=script
    ) as p:
        yield p


def test_a_passing_rate_limit_is_retried(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many customers?")
    proposal = flow.proposal(standin, thread)
    assert "Counts customers." in proposal.all_text()


def test_a_quota_exhausted_for_good(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many customers?")
    message = flow.wait_message(standin, thread, has_text("quota"), "the failure", timeout=60)
    text = message.all_text()
    assert "rate limit or quota (tried 3 times)" in text and "nothing was run" in text
    assert "Ask again in a few minutes" in text and message.action_values() == {}
    bot.wait_log(r"The model failed after 3 call\(s\)")
    flow.reply(bot, thread, "how many customers, now?")
    flow.wait_message(standin, thread, has_text("Counts customers."), "the later proposal")


def test_a_bad_key_is_told_at_once(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many customers?")
    message = flow.wait_message(standin, thread, has_text("API key"), "the failure")
    assert "Asking again will not help" in message.all_text()
    assert "GOOGLE_API_KEY" in message.all_text() and message.action_values() == {}
    bot.wait_log(r"The model failed after 1 call\(s\): ModelAuthenticationError")
    # not retried: the next scripted line is still there for the next question
    flow.reply(bot, thread, "how many customers, now?")
    flow.wait_message(standin, thread, has_text("Counts customers."), "the later proposal")
    assert not [e for e in audit_events(bot) if e["event"] == "executed"]
