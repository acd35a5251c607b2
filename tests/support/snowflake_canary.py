"""The canary tables (tests/support/canary.py) in a database of their own on fakesnow, and the
Snowflake escapes tried on top of the gate's harmful catalogue: what tests/connectors/snowflake/
test_harmful.py and the gate report (bench/gate_report.py) send straight to the connector.

fakesnow's login may write anything and its engine (DuckDB) reads local files, so only the
connector's own checks (connectors/snowflake/sql.py) stand between these statements and it.
"""

from __future__ import annotations

import hashlib
import uuid

import snowflake.connector

from connectors.snowflake.connector import SnowflakeConnector
from connectors.snowflake.session import Credentials
from tests.support.canary import COLUMNS, ROWS
from tests.support.snowflake_recording import Recorder
from tests.support.snowflake_server import FakesnowServer

#: What a Snowflake user would try past a read-only role: stages, scripting, session state,
#: system functions, other databases, and what fakesnow's DuckDB would run if it got the text.
ESCAPES = [
    "COPY INTO @~/stolen FROM users",
    "COPY INTO users FROM @~/stolen",
    "PUT file:///etc/passwd @~",
    "GET @~/stolen file:///tmp/",
    "CREATE STAGE s URL = 's3://evil/'",
    "SELECT $1 FROM @~/stolen",
    "SELECT * FROM TABLE(INFER_SCHEMA(LOCATION => '@~/stolen'))",
    "EXECUTE IMMEDIATE 'DROP TABLE users'",
    "EXECUTE IMMEDIATE $$ BEGIN DROP TABLE users; END; $$",
    "CALL SYSTEM$WAIT(10)",
    "BEGIN DROP TABLE users; END",
    "ALTER SESSION SET STATEMENT_TIMEOUT_IN_SECONDS = 0",
    "ALTER SESSION SET QUERY_TAG = 'not the bot'",
    "ALTER WAREHOUSE querybot_wh SET WAREHOUSE_SIZE = '6X-LARGE'",
    "USE ROLE ACCOUNTADMIN",
    "USE SCHEMA other",
    "SET x = (SELECT password FROM users LIMIT 1)",
    "SELECT $x",
    "UNDROP TABLE users",
    "CREATE OR REPLACE TABLE users CLONE customers",
    "SELECT SYSTEM$CANCEL_ALL_QUERIES(1)",
    "SELECT SYSTEM$WAIT(10)",
    "SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))",
    "SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY())",
    "SELECT * FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY",
    "SELECT * FROM INFORMATION_SCHEMA.TABLES",
    "SELECT * FROM TABLE(GENERATOR(ROWCOUNT => 1000000000000))",
    "SELECT UTIL.PUBLIC.EXFILTRATE(password) FROM users",
    "SELECT EXFILTRATE(password) FROM users",
    "SELECT * FROM IDENTIFIER('users')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT content FROM read_text('/etc/passwd')",
    "SELECT * FROM 'file:///etc/passwd'",
    "SELECT * INTO stolen FROM users",
    "SELECT * FROM users; DROP TABLE users",
    "WITH d AS (DELETE FROM users) SELECT 1",
]


class SnowflakeCanary:
    """Database CANARY_..., schema CANARY, holding the canary tables on a fakesnow server."""

    def __init__(self, server: FakesnowServer) -> None:
        self.server = server
        self.database = f"CANARY_{uuid.uuid4().hex[:8].upper()}"
        with snowflake.connector.connect(**server.connect_kwargs()) as conn:
            cursor = conn.cursor()
            cursor.execute(f"CREATE DATABASE {self.database}")
            cursor.execute(f"CREATE SCHEMA {self.database}.CANARY")
            for table, columns in COLUMNS.items():
                listed = ", ".join(f"{name} {type_}" for name, type_ in columns)
                cursor.execute(f"CREATE TABLE {self.database}.CANARY.{table} ({listed})")
                marks = ", ".join(["%s"] * len(columns))
                cursor.executemany(
                    f"INSERT INTO {self.database}.CANARY.{table} VALUES ({marks})", ROWS[table]
                )

    def connector(self, recorder: Recorder) -> SnowflakeConnector:
        """The connector on schema CANARY, its driver calls through `recorder` (which answers
        EXPLAIN, as Snowflake would, so each statement that passes the connector's checks is
        submitted)."""
        return SnowflakeConnector(
            "fakesnow",
            database=self.database,
            schemas=["CANARY"],
            warehouse="QUERYBOT_WH",
            credentials=Credentials("fake", password="snow"),
            connect=recorder.connect,
        )

    def snapshot(self) -> dict[str, object]:
        """Every schema and table of the canary database, and each table's rows' checksum."""
        with snowflake.connector.connect(**self.server.connect_kwargs()) as conn:
            cursor = conn.cursor()
            cursor.execute(
                f"SELECT table_schema, table_name FROM {self.database}.INFORMATION_SCHEMA.TABLES "
                "ORDER BY 1, 2"
            )
            tables = [tuple(row) for row in cursor.fetchall()]
            state: dict[str, object] = {"tables": tables}
            for schema, table in tables:
                cursor.execute(f'SELECT * FROM {self.database}."{schema}"."{table}"')
                rows = sorted(repr(tuple(row)) for row in cursor.fetchall())
                state[f"{schema}.{table}"] = hashlib.sha256(repr(rows).encode()).hexdigest()
            return state
