"""End to end, the warehouse failing under the bot (a real PostgreSQL, a scratch database and a
login of the test's own): unreachable at start (the bot refuses to start and says why), the
server gone between proposal and approval, the query's connection killed mid-run
(`pg_terminate_backend`), a query timeout, and a permission revoked after start. Each ends with
a clear message in the thread, the card marked failed, the audit log saying so, and the thread
able to go on.

"Server gone" goes through a TCP relay the test owns and stops (pgwarehouse.py): the shared
server is never stopped; only backends of this test's login are terminated. One bot process
serves the module (shared_bot.py); each test's model replies are listed for it in REPLIES.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import cell_text
from bot.conversations.outcomes import RUN_FAILED
from tests.e2e.pgwarehouse import Warehouse, shop_warehouse
from tests.e2e.shared_bot import SharedBot
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import has_text
from tests.support.standin import Posted, SlackStandin

COUNT = "SELECT COUNT(*) AS n FROM shop.sales"
SECRET = "SELECT s.name, s.salary FROM shop.salaries AS s"
#: 2.7e10 rows: far longer than the timeout.
SLOW = (
    "SELECT COUNT(*) AS n FROM shop.sales AS a CROSS JOIN shop.sales AS b"
    " CROSS JOIN shop.sales AS c WHERE a.amount + b.amount + c.amount = -1"
)
TIMEOUT_S = 8

REPLIES = {
    # the server gone between proposal and approval, then back
    "test_server_gone_between_proposal_and_approval": [
        sql_reply(COUNT, "Counts sales."),
        sql_reply(COUNT, "Counts sales."),
    ],
    # the connection killed mid-run, then a follow-up
    "test_connection_killed_mid_query": [
        sql_reply(SLOW, "Counts triples."),
        sql_reply(COUNT, "Counts sales."),
    ],
    # a timeout, then a follow-up
    "test_query_timeout": [sql_reply(SLOW, "Counts triples."), sql_reply(COUNT, "Counts sales.")],
    # a permission revoked after start
    "test_permission_revoked_after_start": [sql_reply(SECRET, "Lists salaries.")],
}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[Warehouse]:
    with shop_warehouse("faults") as wh:
        yield wh


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin,
    warehouse: Warehouse,
    demo_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SharedBot]:
    env = {
        "QUERYBOT_WAREHOUSE": warehouse.url,
        "QUERYBOT_QUERY_TIMEOUT_S": str(TIMEOUT_S),
        "QUERYBOT_PROFILE_VALUES": "off",
    }

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir = data_dir_with(data_dir, demo_file)
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(REPLIES, start, tmp_path_factory.mktemp("e2e-warehouse-faults")) as shared:
        yield shared


@pytest.fixture(autouse=True)
def clean(request: pytest.FixtureRequest, standin: SlackStandin) -> Iterator[None]:
    bot = request.getfixturevalue("bot") if "bot" in request.fixturenames else None
    yield
    if bot is not None:
        print(bot.log()[-5000:])  # shown when the test failed
    standin.assert_clean()


def failed_run(standin: SlackStandin, thread: flow.Thread, proposal: Posted, what: str) -> Posted:
    """The failure message for `proposal`'s run, after checking its card says it failed."""
    message = flow.wait_message(standin, thread, has_text(what), "the failure", timeout=60)
    assert message.action_values() == {}
    card = flow.wait_message(
        standin, thread, lambda m: m.ts == proposal.ts and RUN_FAILED in m.all_text(), "the card"
    )
    assert "Approved by" in card.all_text() and card.action_values() == {}
    return message


def goes_on(bot: BotProcess, standin: SlackStandin, thread: flow.Thread, skip: int) -> None:
    """A follow-up in the same thread is proposed, approved and answered."""
    flow.reply(bot, thread, "how many sales then?")
    proposal = flow.proposal(standin, thread, skip=skip)
    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    assert flow.values(result) == {"N": cell_text(3000)}


def events(bot: BotProcess, proposal: Posted) -> list[str]:
    pid = flow.proposal_id(proposal)
    return [e["event"] for e in audit_events(bot, proposal_id=pid)]


def test_unreachable_at_start_refuses_to_start_and_says_why(
    standin: SlackStandin, warehouse: Warehouse, demo_file: Path, tmp_path: Path
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    env = {"QUERYBOT_WAREHOUSE": f"postgresql://{warehouse.role}@127.0.0.1:{closed}/shop"}
    script = write_script(tmp_path / "script.jsonl", [])  # it never gets to the model
    data_dir = data_dir_with(tmp_path / "data", demo_file)
    process = BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)
    with pytest.raises(AssertionError, match=r"querybot exited \(2\)") as failure:
        process.start(timeout=60)
    said = str(failure.value)
    assert "cannot be used" in said and "Connection refused" in said
    assert f"Check that PostgreSQL is running at 127.0.0.1:{closed}" in said


def test_server_gone_between_proposal_and_approval(
    bot: BotProcess, standin: SlackStandin, warehouse: Warehouse
) -> None:
    thread = flow.ask(bot, "how many sales?")
    proposal = flow.proposal(standin, thread)
    warehouse.relay.stop()
    try:
        flow.click(bot, proposal, approve=True)
        message = failed_run(standin, thread, proposal, "Cannot connect to the postgresql database")
        assert "Connection refused" in message.all_text()
        assert "Check that PostgreSQL is running" in message.all_text()
    finally:
        warehouse.relay.start()
    assert events(bot, proposal) == ["proposed", "approved", "execution_failed"]
    goes_on(bot, standin, thread, skip=2)


def test_connection_killed_mid_query(
    bot: BotProcess, standin: SlackStandin, warehouse: Warehouse
) -> None:
    thread = flow.ask(bot, "how many sales triples?")
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True)
    deadline = time.monotonic() + TIMEOUT_S - 1
    while not (running := warehouse.running("CROSS JOIN")):
        assert time.monotonic() < deadline, "the approved query never started"
        time.sleep(0.05)
    [pid] = running
    assert warehouse.terminate(pid)
    message = failed_run(standin, thread, proposal, "The PostgreSQL connection failed")
    assert "terminating connection" in message.all_text()
    assert events(bot, proposal) == ["proposed", "approved", "execution_failed"]
    goes_on(bot, standin, thread, skip=2)


def test_query_timeout(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many sales triples?")
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True)
    message = failed_run(standin, thread, proposal, f"ran longer than {TIMEOUT_S} s")
    assert "Ask for less data" in message.all_text()
    assert events(bot, proposal) == ["proposed", "approved", "execution_failed"]
    goes_on(bot, standin, thread, skip=2)


def test_permission_revoked_after_start(
    bot: BotProcess, standin: SlackStandin, warehouse: Warehouse
) -> None:
    thread = flow.ask(bot, "list the salaries")
    proposal = flow.proposal(standin, thread)
    warehouse.admin(f'REVOKE SELECT ON shop.salaries FROM "{warehouse.role}"')
    flow.click(bot, proposal, approve=True)
    message = failed_run(standin, thread, proposal, "PostgreSQL refused this statement")
    assert "permission denied for table salaries" in message.all_text()
    assert events(bot, proposal) == ["proposed", "approved", "execution_failed"]
