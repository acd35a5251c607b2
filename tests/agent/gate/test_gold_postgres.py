"""Normalised gold SQL runs on PostgreSQL and returns what the original returns.

The defog-data dumps are PostgreSQL dumps: each loads into its own throwaway database on the local
server (127.0.0.1:5432), and every PostgreSQL gold query the gate accepts runs twice, as written
and as normalised (tables qualified, LIMIT added, functions re-spelled by sqlglot), each in a
read-only transaction; the results must be equal as multisets (numbers compared as floats), once
the columns the gate adds to show what rows are ordered by are dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from agent.gate import Verdict, check_sql
from tests.support import corpora, measures
from tests.support.needs import unavailable

pytestmark = pytest.mark.slow

PREFIX = f"querybot_gate_{os.getpid()}_"  # concurrent test sessions do not collide


@pytest.fixture(scope="module")
def databases(corpora_ready: None) -> Iterator[dict[str, Any]]:
    try:
        admin = psycopg.connect(
            host="127.0.0.1", user="postgres", dbname="postgres", autocommit=True
        )
    except psycopg.Error as error:
        unavailable(f"PostgreSQL at 127.0.0.1:5432 is unreachable ({error})")
    names = sorted(path.stem for path in corpora.DEFOG.glob("*.sql"))
    connections = {}
    try:
        for name in names:
            admin.execute(f"DROP DATABASE IF EXISTS {PREFIX}{name}")
            admin.execute(f"CREATE DATABASE {PREFIX}{name}")
            con = psycopg.connect(
                host="127.0.0.1", user="postgres", dbname=f"{PREFIX}{name}", autocommit=True
            )
            con.execute((corpora.DEFOG / f"{name}.sql").read_text(encoding="utf-8"))
            con.execute("SET statement_timeout = '10s'")
            connections[name] = con
        yield connections
    finally:
        for con in connections.values():
            con.close()
        for name in names:  # FORCE: not waiting for the closed sessions' backends to end
            admin.execute(f"DROP DATABASE IF EXISTS {PREFIX}{name} WITH (FORCE)")
        admin.close()


def rows(con: Any, sql: str, verdict: Verdict | None = None) -> list[str] | str:
    """The result as a sorted multiset of rows, or the error's text; for the gate's SQL (its
    `verdict`), without the columns the gate added to show what the rows are ordered by."""
    try:
        with con.transaction():
            con.execute("SET TRANSACTION READ ONLY")
            result = con.execute(sql).fetchall()
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    if verdict is not None:
        result = measures.as_written(result, verdict)
    return sorted(repr(tuple(_plain(v) for v in row)) for row in result)


def _plain(value: Any) -> Any:
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return round(float(value), 6)
    return value


def test_normalised_gold_sql_returns_the_same_rows(databases: dict[str, Any]) -> None:
    compared, problems = 0, []
    for answer in corpora.gold("postgres"):
        verdict = check_sql(answer.sql, corpora.defog_schema(answer.db, "postgres"))
        if not verdict.ok:
            continue  # counted by test_gold.py
        con = databases[answer.db]
        original, normalised = rows(con, answer.sql), rows(con, verdict.sql, verdict)
        if isinstance(original, str):
            continue  # the gold itself does not run here
        compared += 1
        if normalised != original:
            problems.append(f"{answer.sql}\n  -> {verdict.sql}\n  {str(normalised)[:200]}")
    assert compared == len(corpora.gold("postgres")), "every gold query runs as written"
    assert not problems, "\n".join(problems)
