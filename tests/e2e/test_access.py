"""End to end: who may approve, and where the bot answers.

The bot runs with `QUERYBOT_APPROVERS=U0BOB0001,S0DATA` (Bob and the members of a user group the
stand-in serves), `QUERYBOT_NO_SELF_APPROVAL=true` and `QUERYBOT_CHANNELS` naming two channels.
One bot serves the module (shared_bot.py); each test's model replies are in REPLIES.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, expected_rows, sql_reply
from tests.support.slack_flow import Thread, has_text
from tests.support.slack_payloads import BOB
from tests.support.standin import TEAM_ID, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

CAROL = "U0CAROL01"
DAVE = "U0DAVE001"
GROUP = "S0DATA"
DATA, SALES = "C0DATA001", "C0SALES01"

ORDER_COUNT = "SELECT COUNT(*) AS orders FROM demo.main.orders"
REGION_COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"

REPLIES = {
    "test_a_click_by_someone_not_allowed_runs_nothing": [
        sql_reply(ORDER_COUNT, "Counts all orders.")
    ],
    "test_no_self_approval_but_the_asker_may_reject": [sql_reply(REGION_COUNT, "Counts regions.")],
}
#: Settings of the module's bot, over the demo defaults (conftest's `bots`).
BOT_ENV = {
    "QUERYBOT_APPROVERS": f"{BOB},{GROUP}",
    "QUERYBOT_NO_SELF_APPROVAL": "true",
    "QUERYBOT_CHANNELS": f"{DATA}, {SALES}",
}


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with SlackStandin() as slack:
        slack.usergroups[GROUP] = [DAVE]
        yield slack


def test_a_click_by_someone_not_allowed_runs_nothing(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    lookups = len(standin.calls_to("usergroups.users.list"))
    thread = flow.ask(bot, "how many orders?", channel=DATA)
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=True, user=CAROL)
    [note] = standin.wait_for(lambda: standin.ephemerals_for(DATA, CAROL), what="the note")
    assert note["text"] == (
        f"Only <@{BOB}> or members of <!subteam^{GROUP}> can approve this query. Nothing was run."
    )
    assert note["thread_ts"] == thread.ts
    # Nothing was claimed: the buttons stay, and a member of the group can approve.
    assert flow.proposal_id(flow.proposal(standin, thread)) == pid
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]

    flow.click(bot, proposal, approve=True, user=DAVE)
    result = flow.result(standin, thread)
    assert flow.values(result) == {"Orders": cell_text(expected_rows(demo_file, ORDER_COUNT)[0][0])}
    looked_up = standin.calls_to("usergroups.users.list")[lookups:]
    assert [c.params["usergroup"] for c in looked_up] == [GROUP]
    assert [e["actor"] for e in audit_events(bot, proposal_id=pid, event="approved")] == [DAVE]


def test_no_self_approval_but_the_asker_may_reject(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many regions?", channel=SALES, user=BOB)
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=True, user=BOB)
    [note] = standin.wait_for(lambda: standin.ephemerals_for(SALES, BOB), what="the note")
    assert note["text"].startswith("You asked this question, so someone else must approve it.")
    flow.click(bot, proposal, approve=False, user=BOB)
    flow.wait_message(standin, thread, has_text(f"Rejected by <@{BOB}>"), "the rejection")
    bot.wait_log(f"Decision on proposal {pid} done: rejected")
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed", "rejected"]


def test_a_channel_not_on_the_list_is_refused_politely(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "how many orders?", channel="C0RANDOM1")
    refusal = flow.wait_message(standin, thread, has_text("I only answer"), "the refusal")
    assert f"<#{DATA}>" in refusal.all_text() and f"<#{SALES}>" in refusal.all_text()
    assert audit_events(bot, thread_id=f"{TEAM_ID}:{thread.channel}:{thread.ts}") == []


def test_an_externally_shared_channel_is_refused(bot: BotProcess, standin: SlackStandin) -> None:
    body = payloads.mention(DATA, "how many orders?")
    body["is_ext_shared_channel"] = True
    bot.send_event(body)
    thread = Thread(DATA, body["event"]["ts"])
    refusal = flow.wait_message(standin, thread, has_text("shared with other"), "the refusal")
    assert refusal.action_values() == {}
    assert audit_events(bot, thread_id=f"{TEAM_ID}:{DATA}:{thread.ts}") == []
