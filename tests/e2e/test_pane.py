"""End to end, the conversation pane: the real bot process on the demo warehouse, the Web API
stand-in (which refuses more than four prompts, or a thread it never saw). Opening the messages
tab (the agent view) sets suggested prompts for the DM, with no thread, drawn from the demo's
golden set; a thread of the older assistant view gets them too, and a prompt asked there is
proposed, approved by the asker and answered in that thread, through the same graph."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, sql_reply
from tests.support.slack_payloads import ALICE
from tests.support.standin import SlackStandin

pytestmark = [pytest.mark.usefixtures("checked"), pytest.mark.slow]

GOLDEN = Path(__file__).resolve().parents[2] / "evals"
BOT_ENV = {"QUERYBOT_GOLDEN_DIR": str(GOLDEN)}
COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
REPLIES = {
    "test_the_messages_tab_suggests_the_golden_questions": [],
    "test_a_prompt_asked_in_a_pane_thread_is_approved_and_answered_there": [
        sql_reply(COUNT, "Counts the regions.")
    ],
}
DM = f"D{ALICE[1:]}"


def golden_questions() -> set[str]:
    demo = yaml.safe_load((GOLDEN / "demo.yaml").read_text(encoding="utf-8"))
    return {q["question"] for q in demo["questions"]}


def test_the_messages_tab_suggests_the_golden_questions(
    bot: BotProcess, standin: SlackStandin
) -> None:
    bot.send_event(payloads.home_opened(ALICE, tab="messages"))
    sent = standin.wait_for(lambda: standin.suggested_prompts[-1:], what="suggested prompts")[0]
    assert sent["channel_id"] == DM and "thread_ts" not in sent  # the agent view takes none
    messages = [p["message"] for p in sent["prompts"]]
    assert len(messages) == 4 and set(messages) <= golden_questions()  # none made up
    assert "views.publish" not in [c.method for c in standin.calls]


def test_a_prompt_asked_in_a_pane_thread_is_approved_and_answered_there(
    bot: BotProcess, standin: SlackStandin
) -> None:
    root = payloads.new_ts()
    before = len(standin.suggested_prompts)
    bot.send_event(payloads.assistant_thread_started(ALICE, thread_ts=root))
    standin.wait_for(lambda: len(standin.suggested_prompts) > before, what="the thread's prompts")
    sent = standin.suggested_prompts[-1]
    assert sent["thread_ts"] == root
    prompt = sent["prompts"][0]["message"]
    bot.send_event(payloads.message(DM, prompt, thread_ts=root, channel_type="im"))
    thread = flow.Thread(DM, root)
    card = flow.proposal(standin, thread)
    assert "Counts the regions." in card.all_text()
    flow.click(bot, card, approve=True, user=ALICE)
    answer = flow.result(standin, thread)
    assert answer.thread_ts == root and "5" in answer.all_text()
    assert all(m.channel == DM for m in standin.messages.values())  # nothing left the DM
