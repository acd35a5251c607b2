"""The gate's harmful catalogue (every dialect's) and Snowflake escapes, sent straight to
`SnowflakeConnector.run` (no gate) on fakesnow, over a canary schema holding the canary tables:
no table, row or schema changes, no file appears beside the secret, and no result or error
message holds the secret file's content or a line of /etc/passwd.

Snowflake has no read-only session, and fakesnow has no grants at all (its login may write
anything, and its engine is DuckDB, which can read local files): only the connector's own checks
(connectors/snowflake/sql.py) stand between these statements and the engine. So this is a
harsher test of the connector than Snowflake would be, and says nothing of what Snowflake itself
would do with them.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import snowflake.connector

from tests.support import canary
from tests.support.fixture_files import load_harmful
from tests.support.snowflake_canary import ESCAPES, SnowflakeCanary
from tests.support.snowflake_recording import Recorder
from tests.support.snowflake_server import FakesnowServer

pytestmark = pytest.mark.slow  # a server in its own venv

HARMFUL = load_harmful()


@pytest.fixture
def directory() -> Iterator[Path]:
    """Where the secret lies: fakesnow runs on this machine and its DuckDB can read it."""
    folder = canary.server_directory()
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def canary_db(fakesnow_server: FakesnowServer) -> SnowflakeCanary:
    return SnowflakeCanary(fakesnow_server)


def test_harmful_catalogue_is_contained_by_the_snowflake_connector(
    fakesnow_server: FakesnowServer, canary_db: SnowflakeCanary, directory: Path
) -> None:
    statements = canary.aimed([h.sql for h in HARMFUL] + ESCAPES, directory)
    recorder = Recorder(server=fakesnow_server.connect_kwargs())
    connector = canary_db.connector(recorder)
    try:
        run = canary.contain(connector, statements, canary_db.snapshot, [directory], timeout_s=5.0)
        count = connector.run("SELECT COUNT(*) FROM orders", max_rows=1, timeout_s=30)
    finally:
        connector.close()
    assert count.rows == [(len(canary.ROWS["orders"]),)]
    reached = [s.sql for s in recorder.submitted_queries()][:-1]  # the count above last
    print(
        f"\nsnowflake on fakesnow: {run.executed} statements, {dict(run.errors)}; refused "
        f"before a session {run.executed - len(reached)}; reached fakesnow {len(reached)}, "
        f"ran {len(run.ran)}: {run.ran}"
    )
    assert run.executed == len(statements) > len(HARMFUL)
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    assert not run.changed, f"changed: {run.changed}"
    assert reached == REACHED


#: The statements that reach fakesnow, each harmless in Snowflake: MySQL's executable comments
#: and optimizer hints are comments to Snowflake (it reads `SELECT 1`, or `name` of a canary
#: table); `SELECT $x` reads a session variable of a session opened for this run alone (none is
#: set); `SELECT @x := ...` is a syntax error to Snowflake (fakesnow fails it too).
REACHED = [
    "SELECT 1 /*!50000 UNION SELECT password FROM users */",
    "SELECT /*!32302 1/0, */ 1 FROM customers",
    "SELECT 1 /*M!100000 , SLEEP(5) */",
    "SELECT @x := password FROM users",
    "SELECT /*+ SET_VAR(sql_mode='') */ name FROM customers",
    "SELECT $x",
]


def test_fakesnow_reads_files_and_writes_without_the_connector(
    fakesnow_server: FakesnowServer, canary_db: SnowflakeCanary, directory: Path
) -> None:
    """Two statements the connector refuses, sent on a session of their own: fakesnow reads the
    secret and creates a table, so the containment above is the connector's doing."""
    secret = directory / "secret.txt"
    database = canary_db.database
    session = {**fakesnow_server.connect_kwargs(), "database": database, "schema": "CANARY"}
    with snowflake.connector.connect(**session) as conn:
        cursor = conn.cursor()
        cursor.execute(f"SELECT * FROM read_text('{secret}')")
        assert canary.secret_text() in repr(cursor.fetchall())
        cursor.execute(
            f"CREATE TABLE {database}.CANARY.STOLEN AS SELECT * FROM {database}.CANARY.USERS"
        )
        cursor.execute(f"SELECT COUNT(*) FROM {database}.CANARY.STOLEN")
        assert cursor.fetchall() == [(len(canary.ROWS["users"]),)]
