"""End to end, the model failing under the real bot: a rate limit that passes (retried with
backoff, the question is answered), a quota exhausted for good (a clear message after the bounded
retries), a bad key (a clear message at once, no retry), and a model that does not answer in
time (a clear message after the bounded retries). Each thread goes on afterwards.

One bot process serves the module (shared_bot.py); each test uses the scripted model lines
listed for it in REPLIES (an error line carries the HTTP status a provider would answer).
The last test runs a bot of its own on the real Gemini client (langchain-google-genai), pointed
at a local stand-in of Gemini's API that holds the first request past the client's timeout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.blocks import APPROVE_ACTION
from tests.e2e.shared_bot import Reply
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.gemini_standin import GeminiStandin
from tests.support.slack_flow import has_text
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

COUNT = "SELECT COUNT(*) AS customers FROM demo.main.customers"
QUOTA = {"__error__": "Resource has been exhausted (e.g. check quota).", "status": 429}
BAD_KEY = {"__error__": "API key not valid. Please pass a valid API key.", "status": 401}
TIMED_OUT = {"__error__": "Deadline exceeded.", "status": "timeout", "__delay__": 1}
#: QUERYBOT_MODEL_TIMEOUT_S for the real Gemini client (its default is a minute).
TIMEOUT_S = 3
#: The shared bot's settings: retries after 0.1 s then 0.2 s, not the default 2 s then 4 s.
BOT_ENV = {"QUERYBOT_MODEL_BACKOFF_S": "0.1"}

ANSWER = sql_reply(COUNT, "Counts customers.")
REPLIES: dict[str, list[Reply]] = {
    # a rate limit that passes after two retries
    "test_a_passing_rate_limit_is_retried": [QUOTA, QUOTA, ANSWER],
    # a quota exhausted for good, then a later question
    "test_a_quota_exhausted_for_good": [QUOTA, QUOTA, QUOTA, ANSWER],
    # a bad key, then a later question (the key was fixed)
    "test_a_bad_key_is_told_at_once": [BAD_KEY, ANSWER],
    # no answer in time, three times, then a later question
    "test_a_model_that_never_answers_in_time": [TIMED_OUT, TIMED_OUT, TIMED_OUT, ANSWER],
}


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
    bot.wait_log(r"The model failed after 3 calls")
    flow.reply(bot, thread, "how many customers, now?")
    flow.wait_message(standin, thread, has_text("Counts customers."), "the later proposal")


def test_a_bad_key_is_told_at_once(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many customers?")
    message = flow.wait_message(standin, thread, has_text("API key"), "the failure")
    assert "Asking again will not help" in message.all_text()
    assert "GOOGLE_API_KEY" in message.all_text() and message.action_values() == {}
    bot.wait_log(r"The model failed after 1 call: ModelAuthenticationError")
    # not retried: the next scripted line is still there for the next question
    flow.reply(bot, thread, "how many customers, now?")
    flow.wait_message(standin, thread, has_text("Counts customers."), "the later proposal")
    assert not [e for e in audit_events(bot) if e["event"] == "executed"]


def test_a_model_that_never_answers_in_time(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many customers?")
    message = flow.wait_message(standin, thread, has_text("in time"), "the failure", timeout=60)
    text = message.all_text()
    assert "did not answer in time (tried 3 times)" in text and "nothing was run" in text
    assert "Ask again in a minute" in text and message.action_values() == {}
    bot.wait_log(r"The model failed after 3 calls: ModelTimeoutError")
    flow.reply(bot, thread, "how many customers, now?")
    flow.wait_message(standin, thread, has_text("Counts customers."), "the later proposal")


def test_the_real_gemini_client_gives_up_at_its_timeout_and_the_retry_answers(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    """The bot's Gemini client cuts a request at QUERYBOT_MODEL_TIMEOUT_S; the retry answers."""
    gemini = GeminiStandin()
    gemini.answer(json.dumps(sql_reply(COUNT, "Counts customers.")), delay=TIMEOUT_S + 10)
    gemini.answer(json.dumps(sql_reply(COUNT, "Counts customers, on time.")))
    env = {
        "QUERYBOT_MODEL": "google_genai:gemini-2.5-flash",
        "QUERYBOT_MODEL_TIMEOUT_S": str(TIMEOUT_S),
        **BOT_ENV,
        "GOOGLE_API_KEY": "standin-key",
        "GOOGLE_GEMINI_BASE_URL": gemini.url,  # read by the google-genai SDK
    }
    script = write_script(tmp_path / "unused.jsonl", [])
    data_dir = data_dir_with(tmp_path / "data", demo_file)
    try:
        with BotProcess(slack=slack, data_dir=data_dir, script=script, env=env) as bot:
            thread = flow.ask(bot, "how many customers?")
            proposal = flow.wait_message(
                slack,
                thread,
                lambda m: APPROVE_ACTION in m.action_values(),
                "the proposal after the retry",
                timeout=TIMEOUT_S + 60,
            )
            assert "Counts customers, on time." in proposal.all_text()
            assert gemini.requests == 2  # the one given up on, and the retry
            print(bot.log()[-5000:])  # shown when the test failed
    finally:
        gemini.stop()
