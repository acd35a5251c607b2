"""Who may see what, end to end: the real `querybot run --http` process with a config file whose
PostgreSQL warehouse maps Slack users to roles (`run_as`), over a scratch database with
row-level security (tests/support/pg_roles.py: east and west each see their own region's
sales; only west may read salaries), and the Slack stand-in answering users.info and
usergroups.users.list.

Alice is listed by user id (east), Bob found by his email address (west), Dave through a user
group (east); anyone else is refused (tests/e2e/run_as_flow.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.run_as_flow import (
    DAVE,
    EAST_GROUP,
    NOBODY,
    only_who_could_run_it_may_edit_or_explain,
    people,
    run_as_env,
    unmapped_is_refused,
)
from tests.e2e.sales_flow import warehouse_bots
from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, sql_reply
from tests.support.pg_roles import RlsWarehouse, rls_warehouse
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

SALES = "SELECT region, amount FROM shop.sales ORDER BY amount"
SALARIES = "SELECT name, salary FROM shop.salaries"

REPLIES = {
    "test_two_people_ask_the_same_question_and_each_gets_only_their_rows": [
        sql_reply(SALES, "Sales by region."),
        sql_reply(SALES, "Sales by region."),
    ],
    # no reply: a refused person's question never reaches the model
    "test_an_unmapped_person_is_refused_and_nothing_runs": [],
    "test_only_someone_whose_access_reads_every_table_may_approve": [
        sql_reply(SALARIES, "Salaries.")
    ],
    "test_only_someone_who_could_run_it_may_edit_it_or_see_how_it_was_made": [
        sql_reply(SALARIES, "Salaries.")
    ],
    "test_a_proposal_waiting_when_the_askers_access_changes_never_runs": [
        sql_reply(SALES, "Sales by region.")
    ],
}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[RlsWarehouse]:
    with rls_warehouse() as found:
        yield found


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with people() as slack:
        yield slack


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, warehouse: RlsWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    tmp = tmp_path_factory.mktemp("e2e-run-as")
    env = run_as_env(
        tmp,
        warehouse.url,
        f'users = {{ {ALICE} = "{warehouse.east}" }}\n'
        f'emails = {{ "bob@example.com" = "{warehouse.west}" }}\n'
        f'groups = {{ {EAST_GROUP} = "{warehouse.east}" }}\n',
    )
    with warehouse_bots(standin, env, REPLIES, tmp) as shared:
        yield shared


def rows(result: object) -> list[list[str]]:
    table = result.table()  # type: ignore[attr-defined]
    assert table is not None
    return table[1:]


def test_two_people_ask_the_same_question_and_each_gets_only_their_rows(
    bot: BotProcess, standin: SlackStandin, warehouse: RlsWarehouse
) -> None:
    channel = "C0SALES01"
    seen = {}
    # Alice (east) asks and Dave (east, by his group) approves; Bob (west) asks and Alice
    # approves: the query runs as the asker, whoever approves
    for asker, approver, role in [(ALICE, DAVE, warehouse.east), (BOB, ALICE, warehouse.west)]:
        thread = flow.ask(bot, "sales by region?", user=asker, channel=channel)
        card = flow.proposal(standin, thread)
        assert (
            f"runs as <@{asker}>'s access (`{role}`); the result will be visible to everyone "
            f"in <#{channel}>"
        ) in card.all_text()
        flow.click(bot, card, approve=True, user=approver)
        result = flow.result(standin, thread)
        seen[asker] = rows(result)
        pid = flow.proposal_id(card)
        [executed] = audit_events(bot, proposal_id=pid, event="executed")
        assert f'"ran_as": "{role}"' in executed["detail"]
        assert executed["actor"] == approver
    assert seen[ALICE] == [[r, str(a)] for r, a in warehouse.rows_of("east")]
    assert seen[BOB] == [[r, str(a)] for r, a in warehouse.rows_of("west")]
    # nothing of the other region, nor of the region nobody is mapped to, reached the thread
    everything = "\n".join(m.all_text() for m in standin.messages.values())
    assert not re.search(r"\bnorth\b|\b5,?000\b", everything)


def test_an_unmapped_person_is_refused_and_nothing_runs(
    bot: BotProcess, standin: SlackStandin
) -> None:
    unmapped_is_refused(bot, standin)


def test_only_someone_whose_access_reads_every_table_may_approve(
    bot: BotProcess, standin: SlackStandin
) -> None:
    channel = "C0HR00001"
    thread = flow.ask(bot, "salaries?", user=BOB, channel=channel)
    card = flow.proposal(standin, thread)
    pid = flow.proposal_id(card)
    # Alice's role may not read shop.salaries: her click is refused and claims nothing
    flow.click(bot, card, approve=True, user=ALICE)
    [note] = standin.wait_for(lambda: standin.ephemerals_for(channel, ALICE), what="the note")
    assert "You can approve only queries you could run yourself" in note["text"]
    assert "`shop.salaries`" in note["text"] and "Nothing was run" in note["text"]
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]
    # an unmapped person may not approve either
    flow.click(bot, card, approve=True, user=NOBODY)
    [other] = standin.wait_for(lambda: standin.ephemerals_for(channel, NOBODY), what="a note")
    assert "not mapped to an identity" in other["text"]
    # Bob's role reads it: his approval runs it
    flow.click(bot, card, approve=True, user=BOB)
    assert flow.values(flow.result(standin, thread)) == {"Name": "ann", "Salary": "100"}
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == [
        "proposed",
        "approved",
        "executed",
    ]


def test_only_someone_who_could_run_it_may_edit_it_or_see_how_it_was_made(
    bot: BotProcess, standin: SlackStandin, warehouse: RlsWarehouse
) -> None:
    # Alice's role may not read shop.salaries, Nobody has no role: neither may edit Bob's
    # question over it, nor read how its answer was made
    thread = flow.ask(bot, "salaries?", user=BOB, channel="C0HOWTO01")
    cannot = {
        ALICE: f"your access (`{warehouse.east}`) cannot read `shop.salaries`",
        NOBODY: "not mapped to an identity",
    }
    result = only_who_could_run_it_may_edit_or_explain(
        bot, standin, thread, asker=BOB, cannot=cannot
    )
    assert flow.values(result) == {"Name": "ann", "Salary": "100"}


def test_the_home_tab_lists_only_the_tables_each_person_may_read(
    bot: BotProcess, standin: SlackStandin
) -> None:
    shown = {}
    for user in (ALICE, BOB, NOBODY):
        before = len(standin.published_views)
        bot.send_event(payloads.home_opened(user))
        views = standin.wait_for(
            lambda n=before: standin.published_views[n:], what=f"the Home tab of {user}"
        )
        assert views[0]["user_id"] == user
        shown[user] = json.dumps(views[0]["view"])
    assert "shop.sales" in shown[ALICE] and "shop.salaries" not in shown[ALICE]
    assert "shop.sales" in shown[BOB] and "shop.salaries" in shown[BOB]
    assert "shop." not in shown[NOBODY] and "No tables are visible to you." in shown[NOBODY]


def test_a_proposal_waiting_when_the_askers_access_changes_never_runs(
    bot: BotProcess, standin: SlackStandin, warehouse: RlsWarehouse
) -> None:
    channel = "C0CHANGE1"
    thread = flow.ask(bot, "sales by region?", user=ALICE, channel=channel)
    card = flow.proposal(standin, thread)
    pid = flow.proposal_id(card)
    config = Path(bot.extra_env["QUERYBOT_CONFIG"])
    before = config.read_text(encoding="utf-8")
    try:
        # Alice is taken out of the rules while her proposal waits; the bot restarts with them
        config.write_text(before.replace(f'users = {{ {ALICE} = "{warehouse.east}" }}\n', ""))
        bot.stop()
        bot.start()
        flow.click(bot, card, approve=True, user=BOB)
        [note] = standin.wait_for(lambda: standin.ephemerals_for(channel, BOB), what="the note")
        assert "access of the person who asked has changed" in note["text"]
        assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]
    finally:
        config.write_text(before, encoding="utf-8")
        bot.stop()  # the next test gets a process started with the rules as they were
