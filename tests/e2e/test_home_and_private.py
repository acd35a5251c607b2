"""End to end, the App Home tab and a private answer's files: the real bot process on the demo
warehouse (one process for the module), the Web API stand-in (which refuses what Slack refuses
and keeps each view, message and file). The Home tab shows the person's recent questions with
what each came to and a link to its card, the proposals waiting for their approval in channels
they are in, and the warehouse with what it holds; a private channel's answer brings its CSV and
PNG chart to the asker's and the approver's direct messages, never to the channel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, data_dir_with, sql_reply
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin
from tests.support.standin_messages import dm_channel

pytestmark = pytest.mark.usefixtures("checked")

PRIVATE = "C0PRIVATE1"
DESCRIPTION = "Orders, customers and products of the demo shop"
#: Two months of days: more rows than an answer shows, more points than Slack's chart holds.
DAILY = (
    "SELECT CAST(order_date AS DATE) AS day, COUNT(*) AS orders FROM demo.main.orders"
    " WHERE order_date >= DATE '2026-09-01' GROUP BY day ORDER BY day"
)
COUNT = "SELECT COUNT(*) AS orders FROM demo.main.orders"
REPLIES = {
    "test_a_private_answer_brings_its_csv_and_chart_to_direct_messages": [
        sql_reply(DAILY, "Orders per day.")
    ],
    "test_the_home_tab_shows_questions_waiting_proposals_and_the_warehouse": [
        sql_reply(COUNT, "Counts the orders.")
    ]
    * 3,
}


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    """The module's bot, with a config file: the demo warehouse (described), and one channel
    whose answers are private."""
    tmp = tmp_path_factory.mktemp("home_and_private")
    config = tmp / "querybot.toml"
    config.write_text(
        f'default = "shop"\n[warehouses.shop]\nspec = "demo"\ndescription = "{DESCRIPTION}"\n'
        f'[channels]\n{PRIVATE} = {{ warehouse = "shop", answers = "private" }}\n',
        encoding="utf-8",
    )

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir = data_dir_with(data_dir, demo_file)
        env = {"QUERYBOT_CONFIG": str(config)}
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(REPLIES, start, tmp) as shared:
        yield shared


def test_a_private_answer_brings_its_csv_and_chart_to_direct_messages(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "orders per day since September?", user=ALICE, channel=PRIVATE)
    card = flow.proposal(standin, thread)
    flow.click(bot, card, approve=True, user=BOB)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    for user in (ALICE, BOB):
        notes = standin.wait_for(
            lambda u=user: (
                len(standin.ephemerals_for(PRIVATE, u)) >= 2 and standin.ephemerals_for(PRIVATE, u)
            ),
            what=f"{user}'s result and the note on its files",
        )
        assert "Sources:" in str(notes[0]["blocks"])
        [intro] = [m for m in standin.messages.values() if m.channel == dm_channel(user)]
        assert f"<#{PRIVATE}>" in intro.text
        files = standin.uploads_in(dm_channel(user), intro.ts)
        assert [f.filename for f in files] == ["result.csv", "chart.png"]
        assert files[0].content.startswith(b"day,orders\n2026-09-01,")
        assert files[0].content.count(b"\n") == 62  # the header and 61 days
        assert files[1].content.startswith(b"\x89PNG")
        link = f"/archives/{intro.channel}/p{intro.ts.replace('.', '')}|"
        assert notes[-1]["text"].startswith("`result.csv`, `chart.png` are in <https://")
        assert link in notes[-1]["text"]
    # the channel got no file, and its thread only the note saying where the answer went
    assert standin.uploads_in(PRIVATE, thread.ts) == []
    assert "sent privately" in standin.thread(PRIVATE, thread.ts)[-1].text


def test_the_home_tab_shows_questions_waiting_proposals_and_the_warehouse(
    bot: BotProcess, standin: SlackStandin
) -> None:
    answered = flow.ask(bot, "how many orders?", user=ALICE)
    card = flow.proposal(standin, answered)
    flow.click(bot, card, approve=True, user=BOB)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    waiting = flow.ask(bot, "how many orders now?", user=ALICE)
    mine = flow.proposal(standin, waiting)
    shared = payloads.new_channel()
    standin.members.update({waiting.channel: {ALICE}, shared: {ALICE, BOB}})
    bobs = flow.ask(bot, "orders this week?", user=BOB, channel=shared)
    theirs = flow.proposal(standin, bobs)

    before = len(standin.published_views)
    bot.send_event(payloads.home_opened(ALICE))
    [published] = standin.wait_for(lambda: standin.published_views[before:], what="the Home tab")
    assert published["user_id"] == ALICE
    text = "\n".join(
        b["text"]["text"] for b in published["view"]["blocks"] if b["type"] == "section"
    )
    recent = text.split("*Your recent questions*\n", 1)[1].split("\n*Waiting", 1)[0]
    lines = recent.splitlines()
    assert lines[0].startswith("• how many orders now? _(waiting for approval)_ <https://")
    assert f"/archives/{waiting.channel}/p{mine.ts.replace('.', '')}" in lines[0]
    assert lines[1].startswith("• how many orders? _(answered)_ <https://")
    waits = text.split("*Waiting for your approval*\n", 1)[1].split("\n*Warehouses", 1)[0]
    # anyone may approve: Bob's question in a channel she is in waits for her, as does her own
    assert f"• orders this week? _(asked by <@{BOB}>)_ <https://" in waits.splitlines()[0]
    assert f"• how many orders now? _(asked by <@{ALICE}>)_" in waits.splitlines()[1]
    assert f"/archives/{shared}/p{theirs.ts.replace('.', '')}" in waits
    assert f"*shop* — {DESCRIPTION}\n" in text and "`demo.main.orders`" in text
