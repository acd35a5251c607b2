"""Who may see what on an engine without roles, end to end: the real `querybot run --http`
process with a config file whose SQLite warehouse gives each identity a table list
(`[warehouses.NAME.run_as.tables]`), and the Slack stand-in answering users.info.

Alice is listed by user id as `seller` (orders only); Bob is found by his email address as
`payroll` (orders and salaries). querybot, not the engine, holds each to their list.
Everything the stand-in received in Alice's threads and for her is scanned for salaries' rows
(tests/support/received.py).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from bot.blocks import APPROVE_ACTION
from tests.e2e.run_as_flow import (
    NOBODY,
    note,
    only_who_could_run_it_may_edit_or_explain,
    people,
    run_as_env,
)
from tests.e2e.sales_flow import warehouse_bots
from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, sql_reply
from tests.support.received import Audience, leaks, mark, received
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

ORDERS = "SELECT region, amount FROM orders ORDER BY amount"
SALARIES = "SELECT name, salary FROM salaries"
#: Reads salaries only inside a CTE and a subquery: every reference counts.
HIDDEN = "WITH o AS (SELECT region FROM orders) SELECT (SELECT max(salary) FROM salaries) FROM o"

REPLIES = {
    "test_each_person_reads_only_their_tables": [
        sql_reply(ORDERS, "Orders."),
        sql_reply(SALARIES, "Salaries."),
        sql_reply(HIDDEN, "Orders, with the top salary."),
    ],
    "test_only_someone_whose_list_holds_every_table_may_approve": [
        sql_reply(SALARIES, "Salaries.")
    ],
}


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with people() as slack:
        yield slack


@pytest.fixture(scope="module")
def bots(standin: SlackStandin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedBot]:
    tmp = tmp_path_factory.mktemp("e2e-run-as-allowlist")
    database = tmp / "shop.db"
    with sqlite3.connect(database) as con:
        con.executescript(
            "CREATE TABLE orders (region TEXT, amount INTEGER);"
            "INSERT INTO orders VALUES ('north', 10), ('south', 20);"
            "CREATE TABLE salaries (name TEXT, salary INTEGER);"
            "INSERT INTO salaries VALUES ('zoltan', 913);"
        )
    env = run_as_env(
        tmp,
        f"sqlite:///{database}",
        f'users = {{ {ALICE} = "seller" }}\nemails = {{ "bob@example.com" = "payroll" }}\n',
        more="[warehouses.shop.run_as.tables]\n"
        'seller = ["orders"]\n'
        'payroll = ["orders", "salaries"]\n',
    )
    with warehouse_bots(standin, env, REPLIES, tmp) as shared:
        yield shared


def test_each_person_reads_only_their_tables(bot: BotProcess, standin: SlackStandin) -> None:
    since = mark(standin)
    thread = flow.ask(bot, "orders by region?", user=ALICE, channel="C0SALES01")
    card = flow.proposal(standin, thread)
    assert f"runs as <@{ALICE}>'s access (`seller`)" in card.all_text()
    flow.click(bot, card, approve=True, user=BOB)
    table = flow.result(standin, thread).table()
    assert table is not None and table[1:] == [["north", "10"], ["south", "20"]]
    [executed] = audit_events(bot, proposal_id=flow.proposal_id(card), event="executed")
    assert '"ran_as": "seller"' in executed["detail"]
    # a question in words of no table of hers is asked back, naming her tables only
    asked = flow.ask(bot, "salaries?", user=ALICE, channel="C0SALES01")
    back = flow.wait_message(standin, asked, flow.has_text("This warehouse holds"), "the question")
    assert "orders" in back.all_text() and "salar" not in back.all_text()
    threads = {(thread.channel, thread.ts), (asked.channel, asked.ts)}
    # salaries, read plainly or inside a CTE and a subquery, are not proposed to Alice
    for question in ("orders and salaries?", "orders with the top salary?"):
        asked = flow.ask(bot, question, user=ALICE, channel="C0SALES01")
        refusal = flow.wait_message(
            standin, asked, flow.has_text("Answering this needs"), "the refusal"
        )
        assert "salaries" in refusal.all_text()
        threads.add((asked.channel, asked.ts))
    # nothing Alice was sent, nor anything sent to no one in particular, holds a salary's row
    alice = {"alice": Audience(frozenset({ALICE}), frozenset(threads))}
    assert leaks(received(standin, since), alice, {"": [r"zoltan", r"\b913\b"]}) == []


def test_only_someone_whose_list_holds_every_table_may_approve(
    bot: BotProcess, standin: SlackStandin
) -> None:
    channel = "C0HR00001"
    thread = flow.ask(bot, "salaries?", user=BOB, channel=channel)
    card = flow.proposal(standin, thread)
    pid = flow.proposal_id(card)
    told = note(bot, standin, payloads.click(card, APPROVE_ACTION, user=ALICE))
    assert "You can approve only queries you could run yourself" in told["text"]
    assert "`main.salaries`" in told["text"]
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]
    # nor may Alice or Nobody edit it, or read how its answer was made once Bob approved it
    cannot = {ALICE: "(`seller`) cannot read `main.salaries`", NOBODY: "not mapped"}
    result = only_who_could_run_it_may_edit_or_explain(
        bot, standin, thread, asker=BOB, cannot=cannot
    )
    assert flow.values(result) == {"Name": "zoltan", "Salary": "913"}


def test_the_home_tab_lists_only_the_tables_of_each_list(
    bot: BotProcess, standin: SlackStandin
) -> None:
    shown = {}
    for user in (ALICE, BOB):
        before = len(standin.published_views)
        bot.send_event(payloads.home_opened(user))
        views = standin.wait_for(
            lambda n=before: standin.published_views[n:], what=f"the Home tab of {user}"
        )
        shown[user] = json.dumps(views[0]["view"])
    assert "main.orders" in shown[ALICE] and "main.salaries" not in shown[ALICE]
    assert "main.orders" in shown[BOB] and "main.salaries" in shown[BOB]
