"""The gate writes MySQL-family statements so MariaDB reads them (agent/gate/mariadb.py): golden
round trips through `check_sql`, and MySQL's other renderings left as sqlglot writes them.

The same statements run on a real MariaDB in test_mariadb_server.py.
"""

from __future__ import annotations

import pytest
import sqlglot

from agent.gate import GateSchema, check_sql
from agent.gate.mariadb import DIALECT, writer
from tests.support.sql_text import one_line, tokens

#: (submitted as MySQL/MariaDB, what the gate accepts and writes).
GOLDEN = [
    ("SELECT a FROM t WHERE a REGEXP '^x'", "SELECT a FROM t WHERE a REGEXP '^x'"),
    ("SELECT a FROM t WHERE a RLIKE '^x'", "SELECT a FROM t WHERE a REGEXP '^x'"),
    ("SELECT a FROM t WHERE a NOT REGEXP '^x'", "SELECT a FROM t WHERE NOT (a REGEXP '^x')"),
    ("SELECT a FROM t WHERE NOT a REGEXP '^x'", "SELECT a FROM t WHERE NOT (a REGEXP '^x')"),
    ("SELECT a REGEXP 'x' AND b RLIKE 'y' FROM t", "SELECT a REGEXP 'x' AND b REGEXP 'y' FROM t"),
    # MySQL 8's function form: the operator keeps its meaning inside a comparison
    ("SELECT 1 = REGEXP_LIKE(a, 'x') FROM t", "SELECT 1 = (a REGEXP 'x') FROM t"),
    ("SELECT IF(a REGEXP 'x', 1, 0) FROM t", "SELECT IF(a REGEXP 'x', 1, 0) FROM t"),
    # flags exist only in MySQL 8's REGEXP_LIKE: kept, so MySQL 8 still runs it
    ("SELECT REGEXP_LIKE(a, 'x', 'i') FROM t", "SELECT REGEXP_LIKE(a, 'x', 'i') FROM t"),
    (
        "SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00'",
        "SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP('2024-01-01 00:00:00')",
    ),
    (
        "SELECT * FROM t FOR SYSTEM_TIME BETWEEN '2024-01-01' AND '2025-01-01'",
        "SELECT * FROM t FOR SYSTEM_TIME BETWEEN '2024-01-01' AND '2025-01-01'",
    ),
    (
        "SELECT * FROM t FOR SYSTEM_TIME FROM '2024-01-01' TO '2025-01-01'",
        "SELECT * FROM t FOR SYSTEM_TIME FROM '2024-01-01' TO '2025-01-01'",
    ),
    ("SELECT * FROM t FOR SYSTEM_TIME ALL", "SELECT * FROM t FOR SYSTEM_TIME ALL"),
    ("SELECT x.a FROM t FOR SYSTEM_TIME ALL AS x", "SELECT x.a FROM t FOR SYSTEM_TIME ALL AS x"),
    (
        "SELECT a FROM t FOR SYSTEM_TIME AS OF NOW() - INTERVAL 1 DAY",
        "SELECT a FROM t FOR SYSTEM_TIME AS OF NOW() - INTERVAL '1' DAY",
    ),
    ("SELECT j->>'$.a' FROM t", "SELECT JSON_UNQUOTE(JSON_EXTRACT(j, '$.a')) FROM t"),
    ("SELECT j->'$.a' FROM t", "SELECT JSON_EXTRACT(j, '$.a') FROM t"),
    (
        "SELECT MEDIAN(a) OVER (PARTITION BY b) FROM t",
        "SELECT MEDIAN(a) OVER (PARTITION BY b) FROM t",
    ),
]

#: Statements sqlglot's MySQL generator already writes in a form MariaDB reads (checked on the
#: server in test_mariadb_server.py): the gate's writer leaves them exactly as MySQL's.
UNCHANGED = [
    "SELECT a FROM t LIMIT 10 OFFSET 5",
    "SELECT a FROM t LIMIT 5, 10",
    "SELECT GROUP_CONCAT(DISTINCT a ORDER BY a DESC SEPARATOR '; ') FROM t",
    "SELECT CONVERT(a USING utf8mb4) FROM t",
    "SELECT DATE_FORMAT(d, '%Y-%m'), STR_TO_DATE('2024-01-01', '%Y-%m-%d') FROM t",
    "SELECT d + INTERVAL 1 DAY, DATE_ADD(d, INTERVAL 1 WEEK), DATE_SUB(d, INTERVAL 3 HOUR) FROM t",
    "SELECT TIMESTAMPDIFF(DAY, d, NOW()), DATEDIFF(d, d) FROM t",
    "SELECT IF(a > 1, 'x', 'y'), IFNULL(a, 0), NULLIF(a, 0) FROM t",
    "SELECT CAST(a AS SIGNED), CAST(a AS UNSIGNED), CAST(a AS DECIMAL(10, 2)), CAST(a AS CHAR)",
    "SELECT JSON_EXTRACT(j, '$.a'), JSON_VALUE(j, '$.a'), JSON_LENGTH(j), JSON_KEYS(j) FROM t",
    "SELECT JSON_OBJECT('a', 1), JSON_ARRAY(1, 2), JSON_ARRAYAGG(a), JSON_OBJECTAGG(a, b) FROM t",
    "SELECT * FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (x INT PATH '$')) AS jt",
    "SELECT a DIV 2, a MOD 2, a <=> b FROM t",
    "SELECT REGEXP_SUBSTR(a, 'x'), REGEXP_REPLACE(a, 'x', 'y'), REGEXP_INSTR(a, 'x') FROM t",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c",
    "SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) FROM t",
    "SELECT SUM(a) FROM t GROUP BY b WITH ROLLUP",
    "SELECT STDDEV(a), VARIANCE(a), MONTHNAME(d), LOG(a) FROM t",
]


def empty_schema() -> GateSchema:
    return GateSchema.from_tables([], "mysql")


@pytest.mark.parametrize(("sql", "written"), GOLDEN)
def test_the_gate_writes_what_mariadb_reads(sql: str, written: str) -> None:
    verdict = check_sql(sql, empty_schema(), row_limit=None)
    assert verdict.ok, verdict.reasons
    assert tokens(verdict.sql, "mysql") == tokens(written, "mysql")
    # and it reads back as itself (the gate's own recheck, spelled out)
    assert sqlglot.parse_one(written, read="mysql").sql(dialect=DIALECT) == written


@pytest.mark.parametrize("sql", UNCHANGED)
def test_other_mysql_renderings_are_left_as_sqlglot_writes_them(sql: str) -> None:
    tree = sqlglot.parse_one(sql, read="mysql")
    assert tree.sql(dialect=DIALECT) == tree.sql(dialect="mysql")


def test_the_row_cap_follows_a_system_time_clause() -> None:
    verdict = check_sql("SELECT a FROM t FOR SYSTEM_TIME ALL", empty_schema(), row_limit=10)
    assert verdict.ok, verdict.reasons
    assert one_line(verdict.sql) == "SELECT a FROM t FOR SYSTEM_TIME ALL LIMIT 10"


def test_time_travel_mariadb_cannot_express_is_refused_not_rewritten() -> None:
    verdict = check_sql(
        "SELECT a FROM t FOR SYSTEM_TIME CONTAINED IN ('2024-01-01', '2025-01-01')",
        empty_schema(),
    )
    assert not verdict.ok
    assert [r.code for r in verdict.reasons] == ["unsupported"]
    assert "FOR TIMESTAMP CONTAINED IN" in verdict.reasons[0].message


def test_only_the_mysql_family_changes_writer() -> None:
    assert writer("mysql") == DIALECT
    for other in ("postgres", "duckdb", "sqlite", "bigquery", "looker"):
        assert writer(other) == other
