"""The Slack flow with the Looker connector: the real `querybot run --http` process with
QUERYBOT_WAREHOUSE=looker://... and the LOOKER_* settings pointing its JDBC path at the HSQLDB
stand-in (tests/fixtures/looker/standin.py), built as a file database so that the bot's own Java
VM can open it. Not Looker: a model-shaped HSQLDB database with an `AGGREGATE()` function.

Mention -> proposal in Looker's SQL -> approve -> the stand-in's rows; then a proposal whose first
draft broke a Looker rule: the gate sends it back to the repair step and only the valid SQL is
shown and run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.e2e.shared_bot import SharedBot
from tests.fixtures.looker import standin as looker_standin
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, sql_reply
from tests.support.slack_payloads import BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

REVENUE = (
    "SELECT `orders.status`, AGGREGATE(`orders.total_amount`) AS revenue "
    "FROM `shop`.`orders` GROUP BY `orders.status` ORDER BY revenue DESC;"
)
#: Breaks "a measure only inside AGGREGATE()": SUM over the measure `orders.count`.
BROKEN = (
    "SELECT `users.country`, SUM(`orders.count`) AS orders "
    "FROM `shop`.`orders` GROUP BY `users.country`"
)
REPAIRED = (
    "SELECT `users.country`, AGGREGATE(`orders.count`) AS orders "
    "FROM `shop`.`orders` GROUP BY `users.country` ORDER BY orders DESC"
)


REPLIES = {
    "test_mention_proposal_approval_and_answer": [sql_reply(REVENUE, "Revenue by order status.")],
    "test_a_broken_looker_rule_is_repaired_before_anyone_sees_it": [
        sql_reply(BROKEN, "Orders by country."),
        sql_reply(REPAIRED, "Orders by country, the measure in AGGREGATE."),
    ],
}


@pytest.fixture(scope="module")
def bots(standin: SlackStandin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedBot]:
    tmp = tmp_path_factory.mktemp("e2e-looker")
    url = looker_standin.build_file(tmp / "standin" / "shop")
    env = {
        "QUERYBOT_WAREHOUSE": "looker://looker.example.com/shop",
        **looker_standin.env(url),
    }

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir.mkdir()
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(REPLIES, start, tmp) as shared:
        yield shared


def test_mention_proposal_approval_and_answer(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "revenue by order status?")
    proposal = flow.proposal(standin, thread)
    text = proposal.all_text()
    assert "Revenue by order status." in text
    assert "AGGREGATE(`orders.total_amount`) AS `revenue`" in text
    assert "`shop.orders`" in text

    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    # 10.50 + 4.50 + 20.00 complete, 3.00 cancelled: the stand-in's AGGREGATE sums the measure
    assert result.table() == [
        ["orders.status", "Revenue"],
        ["complete", cell_text(35.0)],
        ["cancelled", cell_text(3.0)],
    ]
    sources = result.all_text()
    assert "*2 rows*" in sources and "looker" in sources
    assert f"approved by <@{BOB}>" in sources


def test_a_broken_looker_rule_is_repaired_before_anyone_sees_it(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "orders by country?")
    proposal = flow.proposal(standin, thread)
    text = proposal.all_text()
    assert "Orders by country, the measure in AGGREGATE." in text
    assert "AGGREGATE(`orders.count`) AS `orders`" in text
    assert "SUM(" not in text

    pid = flow.proposal_id(proposal)
    [proposed] = [e for e in audit_events(bot, proposal_id=pid) if e["event"] == "proposed"]
    assert "SUM(" not in str(proposed) and "AGGREGATE(`orders.count`)" in str(proposed)

    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    assert result.table() == [
        ["users.country", "Orders"],
        ["FR", cell_text(3.0)],
        ["DE", cell_text(1.0)],
    ]
    executed = [e["event"] for e in audit_events(bot, proposal_id=pid)]
    assert executed[0] == "proposed" and "executed" in executed
