"""SqlConnector when the server turns against a running bot (real PostgreSQL and MariaDB): the
query's connection killed mid-run is `WarehouseUnavailable` (never sent back to the model for
repair) and the next run gets a fresh connection; a SELECT grant revoked after the tables were
read is `PermissionDenied`. The end-to-end view is tests/e2e/test_faults_warehouse.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest

from connectors.base import ConnectorError, PermissionDenied, WarehouseUnavailable
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import (
    Sample,
    mysql_connect,
    mysql_sample,
    pg_connect,
    postgres_sample,
)

SAMPLES: dict[str, Callable[[], AbstractContextManager[Sample]]] = {
    "postgresql": postgres_sample,
    "mysql": mysql_sample,
}


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def sample(request: pytest.FixtureRequest) -> Iterator[Sample]:
    with SAMPLES[request.param]() as loaded:
        yield loaded


@pytest.fixture
def connector(sample: Sample) -> Iterator[SqlConnector]:
    connector = SqlConnector(sample.url)
    yield connector
    connector.close()


def kill_session(sample: Sample, sql: str) -> None:
    """End the server session running `sql`, as an administrator would."""
    if sample.engine == "postgresql":
        with pg_connect(sample.extra["name"]) as admin:
            found = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"  # inside the wrapper
                " WHERE strpos(query, %s) > 0 AND state = 'active' AND pid <> pg_backend_pid()",
                (sql,),
            ).fetchall()
        assert found == [(True,)]
        return
    admin = mysql_connect()
    try:
        with admin.cursor() as cur:
            cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO = %s", (sql,))
            [(session,)] = cur.fetchall()
            cur.execute(f"KILL CONNECTION {int(session)}")
    finally:
        admin.close()


def test_a_connection_killed_mid_query_is_unavailable_then_recovers(
    sample: Sample, connector: SqlConnector
) -> None:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            connector.run(sample.slow_sql, max_rows=10, timeout_s=60)
        except BaseException as exc:
            failures.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    for _ in range(200):
        if sample.is_running(sample.slow_sql):
            break
        worker.join(0.05)
    else:
        pytest.fail("the slow statement never started")
    kill_session(sample, sample.slow_sql)
    worker.join(30)
    assert not worker.is_alive()
    [failure] = failures
    assert isinstance(failure, WarehouseUnavailable), failure
    assert not failure.retryable_by_repair and failure.hint.startswith("Check that")
    count = connector.run(
        f"SELECT COUNT(*) FROM {sample.table('employees')}", max_rows=1, timeout_s=10
    )
    assert count.total_rows == 1


def test_a_grant_revoked_after_start_is_permission_denied(sample: Sample) -> None:
    salaries, employees = sample.table("salaries"), sample.table("employees")
    user = sample.extra["name"]
    if sample.engine == "postgresql":
        grant, revoke = (
            [f"GRANT ALL ON {salaries} TO {user}"],
            [f"REVOKE ALL ON {salaries} FROM {user}"],
        )
    else:
        # MySQL applies a database-level change to open sessions only at their next USE, a
        # table-level one at once: grant table by table, as a careful admin does.
        who = f"'{user}'@'%'"
        sample.admin(
            [
                f"REVOKE ALL PRIVILEGES ON {sample.schema}.* FROM {who}",
                f"GRANT SELECT ON {employees} TO {who}",
                f"GRANT SELECT ON {salaries} TO {who}",
            ]
        )
        # afterwards the grants the sample made (tests/support/sql_fixtures.py), no more:
        # a login that may write is refused by the connector, so later tests would fail
        grant = [
            f"REVOKE ALL PRIVILEGES ON {employees} FROM {who}",
            f"GRANT SELECT, SHOW VIEW ON {sample.schema}.* TO {who}",
        ]
        revoke = [f"REVOKE SELECT ON {salaries} FROM {who}"]
    connector = SqlConnector(sample.url)
    try:
        assert salaries in {t.name for t in connector.list_tables()}
        connector.run(f"SELECT * FROM {salaries}", max_rows=1, timeout_s=10)  # a pooled session
        sample.admin(revoke)
        with pytest.raises(ConnectorError) as failure:
            connector.run(f"SELECT * FROM {salaries}", max_rows=10, timeout_s=10)
        assert isinstance(failure.value, PermissionDenied), failure.value
        assert not failure.value.retryable_by_repair
        assert "denied" in failure.value.message.lower()
    finally:
        connector.close()
        sample.admin(grant)
