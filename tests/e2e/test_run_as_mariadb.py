"""Who may see what on MariaDB roles, end to end: the real `querybot run --http` process with a
config file whose MariaDB warehouse maps Slack users to roles (`run_as`), over a scratch
database set up as docs/access.md tells a deployment to (tests/support/mariadb_roles.py: the
login's catalog from its default role, the roles granted to it), and the Slack stand-in.

MariaDB has no row-level security, so each role gets its rows the way docs/access.md says: a
view of them, granted to it in place of the table. Here `east` may read only `sales_east` (the
Marmotville rows) and `west` only `sales_west` (the Quokkaland rows); neither may read `sales`.
Alice is listed by user id (east), Bob found by his email address (west), Dave through a user
group (east); Nobody is refused (tests/e2e/run_as_flow.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import astuple

import pytest

from bot.blocks import APPROVE_ACTION
from tests.e2e.run_as_flow import (
    DAVE,
    EAST_GROUP,
    NOBODY,
    note,
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
from tests.support.mariadb_roles import RoleWarehouse, quoted, role_warehouse
from tests.support.received import Audience, leaks, mark, received
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

#: Rows added to the fixture's `sales`: east's, west's, and one nobody's role may read.
ROWS = [("Marmotville", 5928374), ("Quokkaland", 4817263), ("Narwhalia", 9182736)]
EAST_SALES = "SELECT region, amount FROM sales_east"
WEST_SALES = "SELECT region, amount FROM sales_west"
#: What only each side's rows hold (amounts also with thousands separators), and nobody's.
MARKERS = {
    "alice": [r"marmotville", r"5,?928,?374"],
    "bob": [r"quokkaland", r"4,?817,?263"],
    "": [r"narwhalia", r"9,?182,?736"],
}

REPLIES = {
    "test_two_people_ask_the_same_question_and_each_gets_only_their_rows": [
        sql_reply(EAST_SALES, "Sales."),
        sql_reply(WEST_SALES, "Sales."),
        sql_reply(WEST_SALES, "Sales."),  # Alice again: west's view, which her role may not read
    ],
    # no reply: a refused person's question never reaches the model
    "test_an_unmapped_person_is_refused_and_nothing_runs": [],
    "test_an_approver_whose_role_may_not_read_the_view_is_refused": [
        sql_reply(WEST_SALES, "Sales.")
    ],
}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[RoleWarehouse]:
    with role_warehouse() as found:
        db, east, west = quoted(found.database), quoted(found.east), quoted(found.west)
        found.admin(
            f"INSERT INTO {db}.sales VALUES " + ", ".join(f"('{r}', {a})" for r, a in ROWS),
            f"CREATE VIEW {db}.sales_east AS SELECT region, amount FROM {db}.sales"
            " WHERE region = 'Marmotville'",
            f"CREATE VIEW {db}.sales_west AS SELECT region, amount FROM {db}.sales"
            " WHERE region = 'Quokkaland'",
            f"REVOKE SELECT ON {db}.sales FROM {east}, {west}",
            f"GRANT SELECT ON {db}.sales_east TO {east}",
            f"GRANT SELECT ON {db}.sales_west TO {west}",
        )
        yield found


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with people() as slack:
        yield slack


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, warehouse: RoleWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    tmp = tmp_path_factory.mktemp("e2e-run-as-mariadb")
    env = run_as_env(
        tmp,
        warehouse.url,
        f'users = {{ {ALICE} = "{warehouse.east}" }}\n'
        f'emails = {{ "bob@example.com" = "{warehouse.west}" }}\n'
        f'groups = {{ {EAST_GROUP} = "{warehouse.east}" }}\n',
    )
    with warehouse_bots(standin, env, REPLIES, tmp) as shared:
        yield shared


def answered(
    bot: BotProcess, standin: SlackStandin, *, asker: str, approver: str, role: str
) -> tuple[flow.Thread, dict[str, str]]:
    """`asker` asks for sales, `approver` approves: it ran as `role` (the audit log says so).
    The thread, and the answer's values."""
    thread = flow.ask(bot, "sales?", user=asker, channel="C0SALES01")
    card = flow.proposal(standin, thread)
    assert f"runs as <@{asker}>'s access (`{role}`)" in card.all_text()
    flow.click(bot, card, approve=True, user=approver)
    values = flow.values(flow.result(standin, thread))
    [executed] = audit_events(bot, proposal_id=flow.proposal_id(card), event="executed")
    assert f'"ran_as": "{role}"' in executed["detail"] and executed["actor"] == approver
    return thread, values


def test_two_people_ask_the_same_question_and_each_gets_only_their_rows(
    bot: BotProcess, standin: SlackStandin, warehouse: RoleWarehouse
) -> None:
    since = mark(standin)
    # Alice (east) asks and Dave (east, by his group) approves; Bob (west) asks and approves
    alices, seen = answered(bot, standin, asker=ALICE, approver=DAVE, role=warehouse.east)
    assert seen["Region"] == "Marmotville"
    bobs, seen = answered(bot, standin, asker=BOB, approver=BOB, role=warehouse.west)
    assert seen["Region"] == "Quokkaland"
    # a query over west's view is not proposed to Alice: her role may not read it
    again = flow.ask(bot, "sales?", user=ALICE, channel=alices.channel)
    refusal = flow.wait_message(
        standin, again, flow.has_text("Answering this needs"), "the refusal"
    ).all_text()
    assert "sales_west" in refusal and "nothing was proposed and nothing ran" in refusal
    # nothing of one side's rows reached the other, nor anything of the rows nobody may read
    audiences = {
        "alice": Audience(frozenset({ALICE, DAVE}), frozenset({astuple(alices), astuple(again)})),
        "bob": Audience(frozenset({BOB}), frozenset({astuple(bobs)})),
    }
    assert leaks(received(standin, since), audiences, MARKERS) == []


def test_an_unmapped_person_is_refused_and_nothing_runs(
    bot: BotProcess, standin: SlackStandin
) -> None:
    unmapped_is_refused(bot, standin)


def test_an_approver_whose_role_may_not_read_the_view_is_refused(
    bot: BotProcess, standin: SlackStandin, warehouse: RoleWarehouse
) -> None:
    thread = flow.ask(bot, "sales?", user=BOB, channel="C0HOWTO01")
    card = flow.proposal(standin, thread)
    pid = flow.proposal_id(card)
    table = f"`{warehouse.database}.sales_west`"
    # Alice's role may not read west's view, Nobody has no role: their clicks claim nothing
    told = note(bot, standin, payloads.click(card, APPROVE_ACTION, user=ALICE))
    assert "You can approve only queries you could run yourself" in told["text"]
    assert f"(`{warehouse.east}`) cannot read {table}" in told["text"]
    told = note(bot, standin, payloads.click(card, APPROVE_ACTION, user=NOBODY))
    assert "not mapped to an identity" in told["text"]
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed"]
    # nor may they edit it, or read how its answer was made once Bob approved it
    cannot = {ALICE: f"cannot read {table}", NOBODY: "not mapped to an identity"}
    result = only_who_could_run_it_may_edit_or_explain(
        bot, standin, thread, asker=BOB, cannot=cannot
    )
    assert flow.values(result)["Region"] == "Quokkaland"
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == [
        "proposed",
        "approved",
        "executed",
    ]
