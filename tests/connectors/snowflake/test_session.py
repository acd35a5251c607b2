"""What fakesnow does not emulate, checked at the connector's boundary with the driver's calls
recorded (recording.py): the session parameters each login carries (STATEMENT_TIMEOUT_IN_SECONDS,
QUERY_TAG), SYSTEM$CANCEL_QUERY on a query's id for Slack's Cancel and for a timeout, and the
figures of EXPLAIN and SHOW WAREHOUSES. Everything else still runs on fakesnow."""

from __future__ import annotations

import json
import threading

import pytest

from connectors.base import QueryCancelled, QueryFailed, QueryTimeout, RunContext
from connectors.snowflake.connector import SnowflakeConnector
from tests.connectors.snowflake.conftest import Seeded, make_connector
from tests.support.snowflake_recording import Recorder

pytestmark = pytest.mark.slow  # a server in its own venv

SQL = "SELECT REGION, COUNT(*) AS N FROM ORDERS GROUP BY 1"


def explain(partitions_total: int, partitions_assigned: int, bytes_assigned: int) -> str:
    """What Snowflake's `EXPLAIN USING JSON` returns (its GlobalStats; operations left out)."""
    stats = {
        "partitionsTotal": partitions_total,
        "partitionsAssigned": partitions_assigned,
        "bytesAssigned": bytes_assigned,
    }
    return json.dumps({"GlobalStats": stats, "Operations": [[]]})


def test_a_run_logs_in_with_its_tag_and_statement_timeout(
    connector: SnowflakeConnector, recorder: Recorder, seeded: Seeded
) -> None:
    labels = {"requester": "U0REQ", "approver": "U0APP", "slack_channel": "C0123"}
    connector.run(SQL, max_rows=10, timeout_s=42.5, context=RunContext("prop-1", labels))
    (run,) = recorder.submitted_queries()
    login = recorder.logins[run.login]
    parameters = login["session_parameters"]
    assert parameters["STATEMENT_TIMEOUT_IN_SECONDS"] == 43
    assert json.loads(parameters["QUERY_TAG"]) == {
        "proposal": "prop-1",
        "app": "querybot",
        "requester": "U0REQ",
        "approver": "U0APP",
        "slack_channel": "C0123",
    }
    assert parameters["QUERY_TAG"].startswith('{"proposal":"prop-1"')  # found by this prefix
    assert (login["database"], login["schema"]) == (seeded.database, "SALES")
    assert (login["warehouse"], login["role"]) == ("QUERYBOT_WH", "QUERYBOT_READER")
    assert run.timeout == 42.5  # the driver's own abort too
    # The catalog's session is tagged as such, never as a run.
    connector.list_tables()
    metadata = [s for s in recorder.sent if "INFORMATION_SCHEMA.COLUMNS" in s.sql]
    tag = recorder.logins[metadata[0].login]["session_parameters"]["QUERY_TAG"]
    assert json.loads(tag) == {"app": "querybot", "purpose": "metadata"}


def test_a_long_tag_stays_within_snowflakes_2000_characters(connector, recorder) -> None:
    labels = {f"label{i}": "v" * 150 for i in range(30)}
    connector.run(SQL, max_rows=1, timeout_s=10, context=RunContext("prop-2", labels))
    tag = recorder.logins[-1]["session_parameters"]["QUERY_TAG"]
    assert len(tag) <= 2000 and json.loads(tag)["proposal"] == "prop-2"


def test_cancel_sends_system_cancel_query_for_the_runs_query_id(connector, recorder) -> None:
    recorder.hold()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            connector.run(SQL, max_rows=10, timeout_s=30, context=RunContext("prop-3"))
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert recorder.submitted.wait(10)
    assert connector.cancel("prop-3") is True
    worker.join(10)
    assert not worker.is_alive() and isinstance(outcome[0], QueryCancelled)
    (query,) = recorder.submitted_queries()
    cancels = [s for s in recorder.sent if s.sql.startswith("SELECT SYSTEM$CANCEL_QUERY")]
    assert [c.params for c in cancels] == [(query.query_id,)]
    assert cancels[0].login != query.login  # from the control session, not the busy one
    assert connector.cancel("prop-3") is False  # nothing runs under that key any more
    assert connector.cancel("never-started") is False


def test_a_query_past_its_timeout_is_cancelled(connector, recorder) -> None:
    recorder.hold()
    with pytest.raises(QueryTimeout):
        connector.run(SQL, max_rows=10, timeout_s=0.3, context=RunContext("prop-4"))
    (query,) = recorder.submitted_queries()
    cancels = [s.params for s in recorder.sent if "SYSTEM$CANCEL_QUERY" in s.sql]
    assert cancels == [(query.query_id,)]
    assert recorder.logins[query.login]["session_parameters"]["STATEMENT_TIMEOUT_IN_SECONDS"] == 1


def test_the_estimate_shows_what_explain_assigns_and_the_warehouse(connector, recorder) -> None:
    recorder.script("EXPLAIN USING JSON", ["content"], [(explain(120, 12, 3 * 1024**2),)])
    recorder.script("SHOW WAREHOUSES", ["name", "state", "type", "size"], [
        ("QUERYBOT_WH", "STARTED", "STANDARD", "Medium"),
    ])  # fmt: skip
    estimate = connector.estimate(SQL)
    assert estimate is not None and estimate.bytes_processed == 3 * 1024**2
    assert estimate.refusal == "" and estimate.cost_usd is None
    assert estimate.warnings == (
        "Snowflake will read 12 of 120 micro-partitions (3 MiB).",
        "Runs on warehouse QUERYBOT_WH (Medium, 4 credits an hour while it runs; billed by the "
        "second, 60 s at least).",
    )
    assert f"EXPLAIN USING JSON {SQL}" in recorder.statements()
    assert recorder.submitted_queries() == []  # nothing ran


def test_a_query_over_the_cap_is_not_offered(seeded: Seeded, recorder: Recorder) -> None:
    connector = make_connector(seeded, recorder, max_bytes_scanned=1024**3)
    recorder.script("EXPLAIN USING JSON", ["content"], [(explain(500, 500, 5 * 1024**3),)])
    recorder.script("SHOW WAREHOUSES", ["name", "size"], [("QUERYBOT_WH", "X-Small")])
    try:
        estimate = connector.estimate("SELECT * FROM ORDERS")
    finally:
        connector.close()
    assert estimate is not None
    assert estimate.refusal.startswith(
        "This query would read 5 GiB (500 of 500 micro-partitions), more than the 1 GiB"
    )
    assert estimate.warnings[0].endswith("every partition, since no filter prunes any.")
    assert "X-Small, 1 credit an hour" in estimate.warnings[1]


def test_without_explain_real_snowflake_fails_closed(connector, recorder) -> None:
    """fakesnow has no EXPLAIN: against an account (no SNOWFLAKE_ENDPOINT) that is a failure,
    so nothing is proposed without an estimate."""
    recorder.scripted.clear()
    with pytest.raises(QueryFailed):
        connector.estimate(SQL)
    with pytest.raises(QueryFailed):  # nor is a run nobody approved sent unexplained
        connector.run(SQL, max_rows=1, timeout_s=10)
    assert recorder.submitted_queries() == []
    # An approved run was estimated before approval: it is not explained again.
    connector.run(SQL, max_rows=1, timeout_s=10, context=RunContext("prop-5"))
    assert len(recorder.submitted_queries()) == 1


def test_a_run_nobody_approved_is_refused_over_the_cap(seeded: Seeded, recorder) -> None:
    """A profiling scan or value check was never estimated for a person: it is explained first,
    and refused over the cap before it is submitted."""
    connector = make_connector(seeded, recorder, max_bytes_scanned=1024**2)
    recorder.script("EXPLAIN USING JSON", ["content"], [(explain(90, 90, 2 * 1024**2),)])
    try:
        with pytest.raises(QueryFailed, match=r"read 2 MiB .* so it was not run"):
            connector.run("SELECT REGION FROM ORDERS", max_rows=10, timeout_s=10)
        assert recorder.submitted_queries() == []
        recorder.script("EXPLAIN USING JSON", ["content"], [(explain(90, 3, 1024),)])
        assert len(connector.run("SELECT REGION FROM ORDERS", max_rows=10, timeout_s=10).rows)
    finally:
        connector.close()


def test_a_stand_in_without_explain_gives_no_estimate(seeded: Seeded, recorder) -> None:
    recorder.scripted.clear()
    connector = make_connector(seeded, recorder, endpoint=seeded.server.endpoint)
    try:
        assert connector.estimate(SQL) is None
    finally:
        connector.close()


def test_the_size_is_only_that_of_the_bots_warehouse(connector, recorder) -> None:
    """fakesnow answers SHOW WAREHOUSES with FAKESNOW_WAREHOUSE, X-Small, whatever is asked:
    a row for another warehouse is no size for this one."""
    estimate = connector.estimate(SQL)
    assert estimate is not None
    assert estimate.warnings[1] == "Runs on warehouse QUERYBOT_WH (its size is unknown to the bot)."
    assert "SHOW WAREHOUSES LIKE %s" in recorder.statements()
