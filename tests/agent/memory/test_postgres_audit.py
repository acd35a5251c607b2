"""agent.memory.audit.AuditLog on PostgreSQL: append-only, and answers like the SQLite one."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from agent.memory.audit import AuditLog, sql_sha256
from tests.support.pgdb import scratch_database


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with scratch_database("audit") as found:
        yield found


def test_records_read_back_in_order_with_their_hash(url: str) -> None:
    log = AuditLog(url)
    before = len(log.events())  # the other test's event, when it ran first
    log.record("t1", "proposed", proposal_id="p1", actor="U1", sql="SELECT 1")
    log.record("t1", "approved", proposal_id="p1", actor="U2", sql="SELECT 1")
    log.record("t2", "executed", proposal_id="p9", sql="SELECT 2", detail={"rows": 3})
    assert log.approved_sha256("p1") == sql_sha256("SELECT 1")
    assert log.approved_sha256("p9") is None
    events = log.events("t1")
    assert [(e["event"], e["actor"]) for e in events] == [("proposed", "U1"), ("approved", "U2")]
    assert events[0]["id"] < events[1]["id"]
    assert [e["detail"] for e in log.events("t2")] == [{"rows": 3}]
    assert len(log.events()) == before + 3


def test_the_log_refuses_update_delete_and_truncate(url: str) -> None:
    log = AuditLog(url)
    log.record("t3", "approved", proposal_id="p3", actor="U1", sql="SELECT 3")
    again = AuditLog(url)  # a second replica: set-up is idempotent
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in (
            "UPDATE audit SET sql = 'DROP TABLE x'",
            "DELETE FROM audit",
            "TRUNCATE audit",
        ):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
    assert again.approved_sha256("p3") == sql_sha256("SELECT 3")
