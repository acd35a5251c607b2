"""The gate's harmful catalogue (every dialect) and HSQLDB's own ways to write or reach files,
sent straight to `LookerConnector.run` (no gate) on the HSQLDB stand-in with the connector's
SELECT-only login: no table, row, user or grant changes, no file appears beside the secret, and
no result or error message holds the secret file's content or a line of /etc/passwd.

The stand-in is HSQLDB, not Looker: this shows the JDBC path adds no hole and that a SELECT-only
login is what holds; it says nothing about what Looker's own interface would do with these.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jaydebeapi
import pytest

from connectors import open_connector
from connectors.base import ConnectorError, PermissionDenied
from connectors.looker.connector import LookerConnector
from tests.fixtures.looker import standin
from tests.support import canary
from tests.support.fixture_files import load_harmful

#: HSQLDB statements that write, read files, run Java or change who the session is.
ESCAPES = [
    "SELECT LOAD_FILE('/etc/passwd') FROM (VALUES (0))",
    "SELECT CAST(LOAD_FILE('/etc/passwd', 'UTF-8') AS VARCHAR(1000)) FROM (VALUES (0))",
    "SCRIPT '/tmp/querybot-looker-script.sql'",
    "BACKUP DATABASE TO '/tmp/' NOT BLOCKING",
    "CREATE TEXT TABLE `shop`.`stolen` (`secret` VARCHAR(200))",
    "SET TABLE `shop`.`orders` SOURCE '/etc/passwd'",
    "SET SESSION AUTHORIZATION 'SA'",
    "SET ROLE DBA",
    "GRANT DBA TO LOOKER",
    "ALTER USER LOOKER SET PASSWORD 'changed'",
    "CREATE FUNCTION `shop`.`prop`(k VARCHAR(100)) RETURNS VARCHAR(1000) LANGUAGE JAVA "
    "DETERMINISTIC NO SQL EXTERNAL NAME 'CLASSPATH:java.lang.System.getProperty'",
    "CALL \"java.lang.System.getProperty\"('user.home')",
    "SET DATABASE SQL SYNTAX MYS FALSE",
    "SET FILES LOG FALSE",
    "CHECKPOINT",
    "SHUTDOWN",
    "INSERT INTO `shop`.`orders` (`orders.id`) VALUES (99)",
    "UPDATE `shop`.`orders` SET `orders.amount` = 0",
    "DELETE FROM `shop`.`users`",
    "TRUNCATE TABLE `shop`.`users`",
    "DROP TABLE `shop`.`orders`",
    "MERGE INTO `shop`.`users` USING (VALUES (9)) AS v(i) ON FALSE "
    "WHEN NOT MATCHED THEN INSERT (`users.id`) VALUES (v.i)",
]


@pytest.fixture(scope="module")
def standin_url() -> str:
    return standin.build("looker_harmful")


@pytest.fixture
def looker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> Iterator[LookerConnector]:
    for name, value in standin.env(standin_url, LOOKER_SAMPLE_ROWS="0").items():
        monkeypatch.setenv(name, value)
    connector = open_connector("looker://looker.example.com/shop", data_dir=tmp_path)
    assert isinstance(connector, LookerConnector)
    yield connector
    connector.close()


@pytest.fixture
def directory() -> Iterator[Path]:
    folder = canary.server_directory()
    yield folder
    shutil.rmtree(folder)


def admin_rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    """`sql` as the stand-in's DBA, on a connection of its own."""
    conn = jaydebeapi.connect(standin.DRIVER, url, {"user": "SA", "password": ""})
    try:
        cursor = conn.cursor()
        cursor.execute(sql)
        rows = [tuple(map(str, row)) for row in cursor.fetchall()]
        cursor.close()
        return rows
    finally:
        conn.close()


def snapshot(url: str) -> dict[str, object]:
    """Every table (with its rows), user, role grant, privilege and routine of the stand-in."""
    tables = admin_rows(
        url,
        "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.TABLES "
        "WHERE TABLE_SCHEMA NOT IN ('INFORMATION_SCHEMA', 'SYSTEM_LOBS') ORDER BY 1, 2",
    )
    state: dict[str, object] = {"tables": tables}
    for schema, table, _ in tables:
        state[f"{schema}.{table}"] = sorted(admin_rows(url, f'SELECT * FROM "{schema}"."{table}"'))
    for name, sql in {
        "users": "SELECT USER_NAME, ADMIN, INITIAL_SCHEMA FROM INFORMATION_SCHEMA.SYSTEM_USERS",
        "roles": "SELECT * FROM INFORMATION_SCHEMA.ROLE_AUTHORIZATION_DESCRIPTORS",
        "privileges": "SELECT * FROM INFORMATION_SCHEMA.TABLE_PRIVILEGES",
        "routines": "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM INFORMATION_SCHEMA.ROUTINES",
        "settings": "SELECT * FROM INFORMATION_SCHEMA.SYSTEM_PROPERTIES",
    }.items():
        state[name] = sorted(admin_rows(url, sql))
    return state


@pytest.mark.slow
def test_harmful_catalogue_is_contained_by_the_looker_connector(
    looker: LookerConnector, standin_url: str, directory: Path
) -> None:
    catalogue = [h.sql for h in load_harmful()]
    statements = canary.aimed(catalogue + ESCAPES, directory)
    before, files = snapshot(standin_url), canary.files(directory)
    outside = canary.named_files(statements)

    run = canary.Run()
    for sql in statements:
        try:
            result = looker.run(sql, max_rows=2000, timeout_s=2.0)
        except ConnectorError as exc:
            run.record_connector(sql, None, exc)
        else:
            run.record_connector(sql, result.rows, None)

    refused = run.errors[PermissionDenied.__name__]
    # shown with -s: the counts docs/warehouses.md quotes
    print(
        f"\nlooker stand-in: {run.executed} statements ({len(catalogue)} from the catalogue); "
        f"refused {refused}, failed {run.failed - refused} {dict(run.errors)}, "
        f"ran without change {len(run.ran)}: {run.ran}"
    )
    assert run.executed == len(statements) > len(catalogue) >= 200
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    # LOAD_FILE returns a BLOB whose content a result does not show: none of these may run
    assert not set(run.ran) & set(canary.aimed(ESCAPES, directory)), run.ran
    assert snapshot(standin_url) == before, "the stand-in changed"
    assert canary.files(directory) == files, "a file was written beside the secret"
    assert canary.named_files(statements) == outside, "a file the statements name changed"
    # the connector still answers afterwards (nothing shut the database down)
    count = looker.run("SELECT COUNT(*) FROM `shop`.`orders`", max_rows=1, timeout_s=30)
    assert count.rows == [(4,)]


def test_the_secret_is_within_the_engines_reach(standin_url: str, directory: Path) -> None:
    """The stand-in's DBA can read the secret file: containment above is the login's doing,
    not the file being out of reach."""
    secret = directory / "secret.txt"
    sql = f"SELECT CAST(LOAD_FILE('{secret}', 'UTF-8') AS VARCHAR(200)) FROM (VALUES (0))"
    [(text,)] = admin_rows(standin_url, sql)
    assert canary.secret_text() in text
