"""End to end, Slack's thumbs up and down under an answer: the real bot process, the real agent
on the demo warehouse, the Web API stand-in (which refuses a feedback block Slack would refuse).
Up on an approved answer offers it, privately, as a verified example, and saving it stores it
with who verified it; down opens a modal whose reason is kept for review and becomes a hint in
the thread's failure memory. Both are read from the bot's own files, as `querybot eval
--from-feedback` and `querybot doctor` read them."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from bot.blocks.feedback import VERIFIED, VERIFY_ACTION, WRONG_BLOCK, WRONG_INPUT, WRONG_VIEW
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, sql_reply
from tests.support.standin import Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

CARA = "U0CARA001"
COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
REPLIES = {
    "test_thumbs_up_saves_a_verified_example_with_who_verified_it": [sql_reply(COUNT)],
    "test_thumbs_down_asks_what_was_wrong_and_keeps_it": [sql_reply(COUNT)],
}


def read(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        return con.execute(sql).fetchall()


def ephemeral(standin: SlackStandin, channel: str, user: str, text: str) -> dict[str, Any]:
    return standin.wait_for(
        lambda: next((e for e in standin.ephemerals_for(channel, user) if text in e["text"]), None),
        what=f"an ephemeral to {user} saying {text!r}",
    )


def test_thumbs_up_saves_a_verified_example_with_who_verified_it(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread, _ = flow.ask_approved(bot, standin, "how many regions?")
    answer = flow.result(standin, thread)
    bot.send_click(payloads.feedback_click(answer, positive=True, user=CARA))
    offer = ephemeral(standin, thread.channel, CARA, "verified example")
    assert offer["thread_ts"] == thread.ts
    blocks = offer["blocks"] if isinstance(offer["blocks"], list) else json.loads(offer["blocks"])
    offered = Posted(thread.channel, payloads.new_ts(), thread.ts, offer["text"], blocks)
    bot.send_click(payloads.click(offered, VERIFY_ACTION, user=CARA))
    ephemeral(standin, thread.channel, CARA, VERIFIED)
    [examples] = list(bot.data_dir.glob("examples*.sqlite"))
    [(question, sql, approved_by, verified_by)] = read(
        examples, "SELECT question, sql, approved_by, verified_by FROM examples"
    )
    assert (question, " ".join(sql.split()), approved_by) == (
        "how many regions?",
        COUNT,
        payloads.BOB,
    )
    assert verified_by == CARA
    assert read(bot.data_dir / "state.sqlite", "SELECT rating FROM bot_feedback") == [("up",)]


def test_thumbs_down_asks_what_was_wrong_and_keeps_it(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread, _ = flow.ask_approved(bot, standin, "how many regions are there?")
    answer = flow.result(standin, thread)
    click = payloads.feedback_click(answer, positive=False, user=CARA)
    bot.send_click(click)
    [opened] = standin.wait_for(
        lambda: [v for v in standin.opened_views if v["trigger_id"] == click["trigger_id"]],
        what="the What was wrong? modal",
    )
    assert opened["view"]["callback_id"] == WRONG_VIEW
    reason = {WRONG_BLOCK: {WRONG_INPUT: "it should count only active regions"}}
    assert bot.send_click(payloads.view_submission(opened["view"], reason, user=CARA)) == {}
    ephemeral(standin, thread.channel, CARA, "noted for review")
    kept = read(
        bot.data_dir / "state.sqlite",
        "SELECT rating, reason, question FROM bot_feedback WHERE user_id = 'U0CARA001'"
        " AND rating = 'down'",
    )
    assert kept == [("down", "it should count only active regions", "how many regions are there?")]
    [failures] = list(bot.data_dir.glob("failures*.sqlite"))
    [(kind, problem)] = read(failures, "SELECT kind, problem FROM failures")
    assert kind == "person_rejected" and "only active regions" in problem
