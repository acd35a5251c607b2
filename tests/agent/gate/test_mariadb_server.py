"""What the gate accepts for MySQL runs on a real MariaDB (127.0.0.1:3306) and returns what the
statement as written returns: MariaDB-only syntax (REGEXP, FOR SYSTEM_TIME over a
system-versioned table, JSON functions, GROUP_CONCAT ... SEPARATOR, CONVERT ... USING, INTERVAL
arithmetic, ...) and sql-eval's MySQL gold SQL on three defog-data databases.

Each statement is gated against the connector's own schema, runs through `SqlConnector` as a
SELECT-only login, and its rows are compared with the statement as written, run by the admin
(or with a reference statement where MariaDB cannot run the MySQL text as written).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from agent.gate import GateSchema, check_sql
from connectors.base import ConnectorError
from connectors.sql.connector import SqlConnector
from tests.support import defog_sql, measures
from tests.support.sql_fixtures import (
    CORPORA,
    HOST,
    MYSQL_PORT,
    mysql_connect,
    port_open,
    require,
    unique_name,
)

SETUP = [
    """CREATE TABLE items (
        id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(8, 2), added DATETIME, attrs JSON
    ) WITH SYSTEM VERSIONING""",
    """INSERT INTO items VALUES
        (1, 'apple', 1.50, '2026-01-05 10:00:00', '{"color": "red", "tags": ["fruit"]}'),
        (2, 'banana', 0.25, '2026-02-10 11:30:00', '{"color": "yellow", "tags": []}'),
        (3, 'cherry', 4.00, '2026-03-15 09:15:00', '{"color": "red", "tags": ["fruit", "pit"]}'),
        (4, 'dill', 2.10, '2026-03-20 16:45:00', NULL)""",
    "UPDATE items SET price = price + 1 WHERE id IN (1, 3)",
    "DELETE FROM items WHERE id = 4",
]

#: (statement as a person or the model writes it for MariaDB, reference statement or None when
#: the statement as written is its own reference).
CORPUS: list[tuple[str, str | None]] = [
    ("SELECT name FROM items WHERE name REGEXP '^[ab]' ORDER BY name", None),
    ("SELECT name FROM items WHERE name RLIKE 'an+a' ORDER BY name", None),
    ("SELECT name FROM items WHERE name NOT REGEXP '^[ab]' ORDER BY name", None),
    (
        "SELECT id, 1 = REGEXP_LIKE(name, 'rr') AS hit FROM items ORDER BY id",
        "SELECT id, 1 = (name REGEXP 'rr') AS hit FROM items ORDER BY id",
    ),
    ("SELECT COUNT(*) FROM items FOR SYSTEM_TIME ALL", None),
    ("SELECT id, price FROM items FOR SYSTEM_TIME ALL AS i ORDER BY id, price", None),
    ("SELECT COUNT(*) FROM items FOR SYSTEM_TIME AS OF TIMESTAMP '2000-01-01 00:00:00'", None),
    ("SELECT COUNT(*) FROM items FOR SYSTEM_TIME AS OF NOW() - INTERVAL 1 DAY", None),
    ("SELECT COUNT(*) FROM items FOR SYSTEM_TIME BETWEEN '2000-01-01' AND NOW()", None),
    ("SELECT COUNT(*) FROM items FOR SYSTEM_TIME FROM '2000-01-01' TO '2999-01-01'", None),
    ("SELECT name, JSON_VALUE(attrs, '$.color') FROM items ORDER BY id", None),
    ("SELECT name, JSON_UNQUOTE(JSON_EXTRACT(attrs, '$.color')) FROM items ORDER BY id", None),
    (
        "SELECT name, attrs->>'$.color' AS color FROM items ORDER BY id",
        "SELECT name, JSON_UNQUOTE(JSON_EXTRACT(attrs, '$.color')) AS color FROM items ORDER BY id",
    ),
    (
        "SELECT JSON_LENGTH(attrs, '$.tags'), JSON_CONTAINS(attrs, '\"red\"', '$.color')"
        " FROM items",
        None,
    ),
    ("SELECT JSON_ARRAYAGG(name), JSON_OBJECTAGG(name, price) FROM items", None),
    ("SELECT name FROM items ORDER BY id LIMIT 1 OFFSET 1", None),
    ("SELECT name FROM items ORDER BY id LIMIT 1, 2", None),
    ("SELECT GROUP_CONCAT(name ORDER BY name DESC SEPARATOR '; ') FROM items", None),
    ("SELECT CONVERT(name USING utf8mb4) FROM items ORDER BY id", None),
    ("SELECT DATE_FORMAT(added, '%Y-%m'), STR_TO_DATE('2026-01-05', '%Y-%m-%d') FROM items", None),
    (
        "SELECT added + INTERVAL 1 DAY, added - INTERVAL 2 MONTH, DATE_ADD(added, INTERVAL 1 WEEK),"
        " DATE_SUB(added, INTERVAL 3 HOUR), TIMESTAMPDIFF(DAY, added, '2026-12-31') FROM items",
        None,
    ),
    ("SELECT IF(price > 2, 'dear', 'cheap'), IFNULL(attrs, '{}'), NULLIF(id, 2) FROM items", None),
    ("SELECT CAST(price AS SIGNED), CAST(price AS CHAR), CAST(added AS DATE) FROM items", None),
    ("SELECT id DIV 2, id MOD 2, attrs <=> NULL FROM items ORDER BY id", None),
    ("SELECT name, MEDIAN(price) OVER () FROM items ORDER BY id", None),
    ("SELECT REGEXP_SUBSTR(name, '[aeiou]+'), REGEXP_REPLACE(name, 'a', 'o') FROM items", None),
    (
        "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5)"
        " SELECT SUM(n) FROM c",
        None,
    ),
]


def _rows(rows: Any) -> list[str]:
    return sorted(repr(tuple(row)) for row in rows)


@pytest.fixture(scope="module")
def items() -> Iterator[tuple[SqlConnector, pymysql.cursors.Cursor]]:
    """A throwaway database holding the system-versioned `items`, a SELECT-only connector on it,
    and an admin cursor using it."""
    require(port_open(MYSQL_PORT), f"MariaDB is not reachable at {HOST}:{MYSQL_PORT}")
    name = unique_name()
    admin = mysql_connect()
    cur = admin.cursor()
    cur.execute(f"CREATE DATABASE {name}")
    connector = None
    try:
        cur.execute(f"USE {name}")
        for statement in SETUP:
            cur.execute(statement)
        cur.execute(f"CREATE USER '{name}'@'%'")
        cur.execute(f"GRANT SELECT ON {name}.* TO '{name}'@'%'")
        connector = SqlConnector(f"mysql://{name}@{HOST}:{MYSQL_PORT}/{name}", pool_size=1)
        yield connector, cur
    finally:
        if connector is not None:
            connector.close()
        cur.execute(f"DROP DATABASE IF EXISTS {name}")
        cur.execute(f"DROP USER IF EXISTS '{name}'@'%'")
        admin.close()


@pytest.mark.parametrize(("sql", "reference"), CORPUS)
def test_mariadb_syntax_passes_the_gate_and_runs_unchanged_in_meaning(
    items: tuple[SqlConnector, pymysql.cursors.Cursor], sql: str, reference: str | None
) -> None:
    connector, admin = items
    schema = GateSchema.from_tables(connector.list_tables(), connector.dialect)
    verdict = check_sql(sql, schema, row_limit=None)
    assert verdict.ok, verdict.reasons
    admin.execute(reference or sql)
    expected = _rows(admin.fetchall())
    got = connector.run(verdict.sql, max_rows=100, timeout_s=10)
    assert _rows(measures.as_written(got.rows, verdict)) == expected, verdict.sql


def test_system_time_reads_the_history(items: tuple[SqlConnector, pymysql.cursors.Cursor]) -> None:
    """The clause is kept, not dropped: ALL reads 3 current rows, the old versions of the 2
    updated ones and the deleted one."""
    connector, _ = items
    schema = GateSchema.from_tables(connector.list_tables(), connector.dialect)
    counts = []
    for sql in ("SELECT COUNT(*) FROM items", "SELECT COUNT(*) FROM items FOR SYSTEM_TIME ALL"):
        verdict = check_sql(sql, schema)
        assert verdict.ok, verdict.reasons
        counts.append(connector.run(verdict.sql, max_rows=1, timeout_s=10).rows[0][0])
    assert counts == [3, 6]


@pytest.mark.slow
def test_sql_eval_mysql_gold_passes_the_gate_and_returns_the_same_rows(tmp_path: Path) -> None:
    require((CORPORA / "defog-data").is_dir(), f"the shared corpora are missing ({CORPORA})")
    chosen = ("academic", "car_dealership", "derm_treatment")
    pairs = [p for p in defog_sql.pairs("mysql") if p.dialect.database in chosen]
    sources = {d: defog_sql.source_tables(defog_sql.reference(d, tmp_path)) for d in chosen}
    compared = 0
    with defog_sql.load_mariadb(sources) as loaded:
        for pair in pairs:
            connector = loaded.connectors[pair.dialect.database]
            sql = pair.dialect.queries[0]
            try:
                as_written = connector.run(sql, max_rows=100_000, timeout_s=20)
            except ConnectorError:  # the gold itself fails here (defog_sql.KNOWN says why)
                continue
            schema = GateSchema.from_tables(connector.list_tables(), connector.dialect)
            verdict = check_sql(sql, schema, row_limit=None)
            assert verdict.ok, (sql, verdict.reasons)
            gated = connector.run(verdict.sql, max_rows=100_000, timeout_s=20)
            shown = measures.as_written(gated.rows, verdict)
            assert _rows(shown) == _rows(as_written.rows), (sql, verdict.sql)
            compared += 1
    assert compared >= 0.9 * len(pairs) > 30
