"""End to end, the warehouse failing under the bot (a real PostgreSQL, a scratch database and a
login of the test's own): unreachable at start (the bot refuses to start and says why), the
server gone between proposal and approval, the query's connection killed mid-run
(`pg_terminate_backend`), a query timeout, and a permission revoked after start. Each ends with
a clear message in the thread, the card marked failed, the audit log saying so, and the thread
able to go on.

"Server gone" goes through a TCP relay the test owns and stops: the shared server is never
stopped; only backends of this test's login are terminated.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import slack_flow as flow
from botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from pgdb import HOST, scratch_database
from slack_flow import has_text
from standin import Posted, SlackStandin

from bot.blocks import APPROVE_ACTION, cell_text
from bot.threads import RUN_FAILED

COUNT = "SELECT COUNT(*) AS n FROM shop.sales"
SECRET = "SELECT s.name, s.salary FROM shop.salaries AS s"
#: 2.7e10 rows: far longer than the timeout.
SLOW = (
    "SELECT COUNT(*) AS n FROM shop.sales AS a CROSS JOIN shop.sales AS b"
    " CROSS JOIN shop.sales AS c WHERE a.amount + b.amount + c.amount = -1"
)
TIMEOUT_S = 8

SCRIPT = [
    # the server gone between proposal and approval, then back
    sql_reply(COUNT, "Counts sales."),
    sql_reply(COUNT, "Counts sales."),
    # the connection killed mid-run, then a follow-up
    sql_reply(SLOW, "Counts triples."),
    sql_reply(COUNT, "Counts sales."),
    # a timeout, then a follow-up
    sql_reply(SLOW, "Counts triples."),
    sql_reply(COUNT, "Counts sales."),
    # a permission revoked after start
    sql_reply(SECRET, "Lists salaries."),
]


class Relay:
    """A TCP relay to PostgreSQL that the test can stop (the server "goes away") and restart
    on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> Relay:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Refuse new connections and cut the open ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        if listener:
            # shutdown wakes the thread blocked in accept(); close alone leaves it listening
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class Warehouse:
    def __init__(self, admin_url: str, role: str, relay: Relay) -> None:
        self.admin_url = admin_url
        self.role = role
        self.relay = relay
        database = admin_url.rsplit("/", 1)[1]
        self.url = f"postgresql://{role}@127.0.0.1:{relay.port}/{database}"

    def admin(self, sql: str) -> list[tuple]:
        with psycopg.connect(self.admin_url, autocommit=True) as con:
            cursor = con.execute(sql)
            return cursor.fetchall() if cursor.description else []


@pytest.fixture(scope="module")
def warehouse() -> Iterator[Warehouse]:
    role = f"querybot_faults_{uuid.uuid4().hex[:8]}"
    host, port = HOST.split(":")
    relay = Relay((host, int(port))).start()
    with scratch_database("faults") as admin_url:
        wh = Warehouse(admin_url, role, relay)
        wh.admin(
            "CREATE SCHEMA shop;"
            " CREATE TABLE shop.sales (region text, amount int);"
            " INSERT INTO shop.sales SELECT 'r' || (g % 5), g FROM generate_series(1, 3000) g;"
            " CREATE TABLE shop.salaries (name text, salary int);"
            " INSERT INTO shop.salaries VALUES ('ann', 100);"
            f' CREATE ROLE "{role}" LOGIN;'
            f' GRANT USAGE ON SCHEMA shop TO "{role}";'
            f' GRANT SELECT ON shop.sales, shop.salaries TO "{role}"'
        )
        try:
            yield wh
        finally:
            relay.stop()
    with psycopg.connect(admin_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as con:
        con.execute(f'DROP ROLE IF EXISTS "{role}"')


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin,
    warehouse: Warehouse,
    demo_db: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-warehouse-faults")
    env = {
        "QUERYBOT_WAREHOUSE": warehouse.url,
        "QUERYBOT_QUERY_TIMEOUT_S": str(TIMEOUT_S),
        "QUERYBOT_PROFILE_VALUES": "off",
    }
    data_dir = data_dir_with(tmp / "data", demo_db)
    script = write_script(tmp / "script.jsonl", SCRIPT)
    with BotProcess(slack=standin, data_dir=data_dir, script=script, env=env) as process:
        yield process


@pytest.fixture(autouse=True)
def clean(request: pytest.FixtureRequest, standin: SlackStandin) -> Iterator[None]:
    yield
    if "bot" in request.fixturenames:
        print(request.getfixturevalue("bot").log()[-5000:])  # shown when the test failed
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
    assert (result.table() or [])[1:] == [[cell_text(3000)]]


def events(bot: BotProcess, proposal: Posted) -> list[str]:
    pid = proposal.action_values()[APPROVE_ACTION]
    return [e["event"] for e in audit_events(bot, proposal_id=pid)]


def test_unreachable_at_start_refuses_to_start_and_says_why(
    standin: SlackStandin, warehouse: Warehouse, demo_db: Path, tmp_path: Path
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    env = {"QUERYBOT_WAREHOUSE": f"postgresql://{warehouse.role}@127.0.0.1:{closed}/shop"}
    script = write_script(tmp_path / "script.jsonl", SCRIPT)
    data_dir = data_dir_with(tmp_path / "data", demo_db)
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
    thread = flow.ask(bot, "how many triples?")
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True)
    find = (
        "SELECT pid FROM pg_stat_activity WHERE state = 'active'"
        f" AND usename = '{warehouse.role}' AND query LIKE '%CROSS JOIN%'"
    )
    deadline = time.monotonic() + TIMEOUT_S - 1
    while not (running := warehouse.admin(find)):
        assert time.monotonic() < deadline, "the approved query never started"
        time.sleep(0.05)
    [(pid,)] = running
    assert warehouse.admin(f"SELECT pg_terminate_backend({pid})") == [(True,)]
    message = failed_run(standin, thread, proposal, "The PostgreSQL connection failed")
    assert "terminating connection" in message.all_text()
    assert events(bot, proposal) == ["proposed", "approved", "execution_failed"]
    goes_on(bot, standin, thread, skip=2)


def test_query_timeout(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many triples?")
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
